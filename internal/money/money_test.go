package money

import (
	"strings"
	"testing"
)

func TestMinorUnits(t *testing.T) {
	for _, tc := range []struct {
		amount, code string
		want         int64
		ok           bool
		says         string // in the error
	}{
		{"49.99", "EUR", 4999, true, ""},
		{"49", "usd", 4900, true, ""},
		{"0.1", "EUR", 10, true, ""},
		{"1000", "JPY", 1000, true, ""},
		{"1000.5", "JPY", 0, false, "decimal places"},
		{"1.234", "KWD", 1234, true, ""},
		{"1.2345", "KWD", 0, false, ""},
		{"-5.50", "EUR", -550, true, ""},
		{"49.999", "EUR", 0, false, ""},
		{"abc", "EUR", 0, false, "not a decimal number"},
		{"10", "XYZ", 0, false, ""},
		{"1e400", "EUR", 0, false, "too large"},
		{"-1e400", "EUR", 0, false, "too large"},
		{"1e19", "JPY", 0, false, "too large"},
		{"1e17", "EUR", 0, false, "too large"},
		{"1e17", "JPY", 100_000_000_000_000_000, true, ""},
		{"9999999999999999.99", "EUR", 999_999_999_999_999_999, true, ""},
		{"1e-400", "EUR", 0, false, "decimal places"},
		{"NaN", "EUR", 0, false, "not a decimal number"},
		{"Infinity", "EUR", 0, false, "not a decimal number"},
		{"-inf", "EUR", 0, false, "not a decimal number"},
		{"1.5e1", "EUR", 1500, true, ""},
		// at most 40 characters: parsing takes time quadratic in the digits
		{"0000000000000000000000000000000000049.99", "EUR", 4999, true, ""},
		{"00000000000000000000000000000000000049.99", "EUR", 0, false, ""},
		{"1" + strings.Repeat("0", 4_000_000), "EUR", 0, false, "at most 40 characters"},
	} {
		got, err := MinorUnits(tc.amount, tc.code)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("MinorUnits(%q, %q) = %d, %v; want %d (ok=%v)", tc.amount, tc.code, got, err, tc.want, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.says) {
			t.Errorf("MinorUnits(%q, %q): %v; want it to say %q", tc.amount, tc.code, err, tc.says)
		}
	}
}

func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		amount           int64
		from, to         string
		fromRate, toRate string
		want             int64
	}{
		{1100, "USD", "EUR", "1.10", "1", 1000},    // 11.00 USD at 1.10 USD/EUR = 10.00 EUR
		{1000, "EUR", "USD", "1", "1.10", 1100},    // and back
		{1000, "JPY", "EUR", "160", "1", 625},      // ¥1,000 at 160 ¥/EUR = 6.25 EUR
		{625, "EUR", "JPY", "1", "160", 1000},      // 6.25 EUR = ¥1,000
		{1, "EUR", "JPY", "1", "160.5", 2},         // 0.01 EUR = ¥1.605 → ¥2
		{1999, "GBP", "USD", "0.85", "1.10", 2587}, // 19.99 × 1.10/0.85 = 25.869… → 25.87
		{1234, "KWD", "EUR", "0.33", "1", 374},     // 1.234 KWD (3 decimals) = 3.739… EUR → 3.74
		{5, "EUR", "EUR", "1", "1", 5},
	} {
		got, _, err := Convert(tc.amount, tc.from, tc.to, tc.fromRate, tc.toRate)
		if err != nil || got != tc.want {
			t.Errorf("Convert(%d %s→%s at %s/%s) = %d, %v; want %d", tc.amount, tc.from, tc.to, tc.fromRate, tc.toRate, got, err, tc.want)
		}
	}
	if _, _, err := Convert(1, "EUR", "USD", "0", "1"); err == nil {
		t.Error("a zero rate was accepted")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		amount int64
		code   string
		want   string
	}{{123456, "EUR", "€1,234.56"}, {1000, "JPY", "¥1,000"}, {-1999, "USD", "-$19.99"}, {5, "KWD", "KWD\u00a00.005"}} {
		if got := Format(tc.amount, tc.code); got != tc.want {
			t.Errorf("Format(%d, %s) = %q, want %q", tc.amount, tc.code, got, tc.want)
		}
	}
}
