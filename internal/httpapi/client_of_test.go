package httpapi

import "testing"

// A limit per address counts an IPv6 client by its /64, which one host or
// subscriber is given whole, and an IPv4 client by its address, however
// written.
func TestLimitsCountIPv6ByNetwork(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"203.0.113.7", "203.0.113.8", false},
		{"::ffff:203.0.113.7", "::ffff:203.0.113.8", false},
		{"::ffff:203.0.113.7", "203.0.113.7", true},
	} {
		a, b := LoginLimits("victim@example.com", tc.a, 10), LoginLimits("victim@example.com", tc.b, 10)
		for i := range a {
			if same := a[i].Key == b[i].Key; same != tc.same {
				t.Errorf("%s and %s: limit %d shared %v, want %v", tc.a, tc.b, i, same, tc.same)
			}
		}
		if same := failKey(failCredential, tc.a, "") == failKey(failCredential, tc.b, ""); same != tc.same {
			t.Errorf("%s and %s: failure count shared %v, want %v", tc.a, tc.b, same, tc.same)
		}
		ka, _ := ShareMisses(tc.a)
		kb, _ := ShareMisses(tc.b)
		if same := ka == kb; same != tc.same {
			t.Errorf("%s and %s: shared links' misses shared %v, want %v", tc.a, tc.b, same, tc.same)
		}
	}
}
