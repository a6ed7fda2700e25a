package money

import "testing"

func TestMinorUnits(t *testing.T) {
	for _, tc := range []struct {
		amount, code string
		want         int64
		ok           bool
	}{
		{"49.99", "EUR", 4999, true},
		{"49", "usd", 4900, true},
		{"0.1", "EUR", 10, true},
		{"1000", "JPY", 1000, true},
		{"1000.5", "JPY", 0, false},
		{"1.234", "KWD", 1234, true},
		{"1.2345", "KWD", 0, false},
		{"-5.50", "EUR", -550, true},
		{"49.999", "EUR", 0, false},
		{"abc", "EUR", 0, false},
		{"10", "XYZ", 0, false},
		{"1e400", "EUR", 0, false},
	} {
		got, err := MinorUnits(tc.amount, tc.code)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("MinorUnits(%q, %q) = %d, %v; want %d (ok=%v)", tc.amount, tc.code, got, err, tc.want, tc.ok)
		}
	}
}
