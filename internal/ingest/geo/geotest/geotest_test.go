package geotest_test

import (
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oschwald/maxminddb-golang/v2"
	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/internal/ingest/geo/geotest"
)

// TestWriteCityDBLayout reads the file back without package geo, to check it
// has the GeoIP2-City shape real MaxMind files have.
func TestWriteCityDBLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "city.mmdb")
	geotest.WriteCityDB(t, path, map[string]geo.Location{
		"81.2.69.0/24": {CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London"},
		"2a02::/16":    {CountryCode: "DE"},
	})
	r, err := maxminddb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	if got := r.Metadata.DatabaseType; got != "GeoIP2-City" {
		t.Errorf("DatabaseType = %q, want GeoIP2-City", got)
	}
	if got := r.Metadata.IPVersion; got != 6 {
		t.Errorf("IPVersion = %d, want 6", got)
	}
	if got := r.Metadata.RecordSize; got != 24 {
		t.Errorf("RecordSize = %d, want 24", got)
	}

	tests := []struct {
		ip   string
		want map[string]any
	}{
		{"81.2.69.142", map[string]any{
			"country":      map[string]any{"iso_code": "GB", "names": map[string]any{"en": "United Kingdom"}},
			"subdivisions": []any{map[string]any{"iso_code": "ENG", "names": map[string]any{"en": "England"}}},
			"city":         map[string]any{"names": map[string]any{"en": "London"}},
		}},
		{"2a02::1", map[string]any{
			"country": map[string]any{"iso_code": "DE", "names": map[string]any{"en": "Germany"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			var got map[string]any
			if err := r.Lookup(netip.MustParseAddr(tt.ip)).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("record mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteCityDBNarrowestWins checks that a network nested in another keeps
// its own record whatever order the map yields its keys in.
func TestWriteCityDBNarrowestWins(t *testing.T) {
	for i := range 10 {
		db := geotest.OpenCityDB(t, map[string]geo.Location{
			"2001:db8::/32":     {CountryCode: "US"},
			"2001:db8:1::/48":   {CountryCode: "CA"},
			"2001:db8:1:2::/64": {CountryCode: "MX"},
			"198.51.100.0/24":   {CountryCode: "FR"},
			"198.51.100.128/25": {CountryCode: "BE"},
		})
		for ip, want := range map[string]string{
			"2001:db8::1": "US", "2001:db8:1::1": "CA", "2001:db8:1:2::1": "MX",
			"198.51.100.1": "FR", "198.51.100.200": "BE",
		} {
			if got := db.Lookup(netip.MustParseAddr(ip)).CountryCode; got != want {
				t.Fatalf("run %d: Lookup(%s).CountryCode = %q, want %q", i, ip, got, want)
			}
		}
	}
}
