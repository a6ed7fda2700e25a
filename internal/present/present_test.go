package present

import "testing"

func TestFormats(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, c := range []struct{ got, want string }{
		{Number(0), "0"}, {Number(1234567), "1,234,567"}, {Number(-1000), "-1,000"},
		{Percent(33.333), "33.3%"},
		{Duration(42), "42s"}, {Duration(65), "1m 05s"}, {Duration(3725), "1h 02m"},
		{Change(nil), "–"}, {Change(f(50)), "+50.0%"}, {Change(f(-54.5)), "-54.5%"}, {Change(f(0)), "0.0%"},
		{Points(16.67), "+16.7 pts"}, {Points(-5), "-5.0 pts"}, {Points(0), "0.0 pts"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// A label that anyone may send (a tracked page, a source) stays one line of
// text in a mail: control characters and the marks that reorder text become
// U+FFFD, everything else is kept, and the padding counts characters.
func TestPadKeepsLabelsInert(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/pricing", "/pricing  "},
		{"/x\r\nUnsubscribe: https://evil.example/", "/x\ufffd\ufffdUnsubscribe: https://evil.example/"},
		{"a\tb\x00c\x7fd\u0085e", "a\ufffdb\ufffdc\ufffdd\ufffde "},
		{"/\u202egnp.exe", "/\ufffdgnp.exe "},
		{"/\u2066a\u2069", "/\ufffda\ufffd      "},
		{"/menü", "/menü     "},
		{"/日本", "/日本       "},
	} {
		if got := Pad(10, c.in); got != c.want {
			t.Errorf("Pad(10, %q) = %q, want %q", c.in, got, c.want)
		}
	}
}
