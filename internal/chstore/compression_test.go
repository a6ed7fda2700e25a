package chstore

import "testing"

func TestCompressionOnlyOffTheHost(t *testing.T) {
	cases := map[string]bool{ // address list -> compressed
		"127.0.0.1:19000":                    false,
		"localhost:9000":                     false,
		"[::1]:9000, 127.0.0.2:9000":         false,
		"127.0.0.1:19101,127.0.0.1:19102":    false,
		"clickhouse:9000":                    true,
		"10.0.0.5:9000":                      true,
		"127.0.0.1:19000, ch2.internal:9000": true,
		"ch1.example.com:9440":               true,
	}
	for list, want := range cases {
		if got := compression(list) != nil; got != want {
			t.Errorf("compression(%q) on = %v, want %v", list, got, want)
		}
	}
}
