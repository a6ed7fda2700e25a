package geo_test

import (
	"testing"

	"github.com/tally-analytics/tally/internal/ingest/geo"
)

func TestCountryName(t *testing.T) {
	tests := []struct {
		code, want string
	}{
		{"US", "United States"},
		{"DE", "Germany"},
		{"GB", "United Kingdom"},
		{"JP", "Japan"},
		{"us", "United States"},
		{"HK", "Hong Kong"},       // override of "Hong Kong SAR China"
		{"MK", "North Macedonia"}, // override of an outdated name
		{" FR ", "France"},
		{"ZZ", "Unknown"},
		{"", "Unknown"},
		{"XX", "Unknown"},  // unassigned
		{"USA", "Unknown"}, // alpha-3 is not accepted
		{"419", "Unknown"}, // UN M.49 area, not a country
		{"Q1", "Unknown"},  // not a code
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			if got := geo.CountryName(tt.code); got != tt.want {
				t.Errorf("CountryName(%q) = %q, want %q", tt.code, got, tt.want)
			}
		})
	}
}
