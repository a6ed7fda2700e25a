package httpapi

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// The scheme of a URL tally shows believes X-Forwarded-Proto only from a
// trusted proxy, as the redirect to HTTPS does: any other client's
// forwarding headers change nothing.
func TestBaseURLSchemeTrustsOnlyProxies(t *testing.T) {
	_, proxies, err := net.ParseCIDR("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	trusted := []*net.IPNet{proxies}
	for _, tc := range []struct {
		name, remote, public string
		headers              map[string]string
		tls                  bool
		want                 string
	}{
		{name: "plain", remote: "203.0.113.7:4000", want: "http://tally.example"},
		{name: "a client's X-Forwarded-Proto", remote: "203.0.113.7:4000",
			headers: map[string]string{"X-Forwarded-Proto": "https"}, want: "http://tally.example"},
		{name: "a client's other forwarding headers", remote: "203.0.113.7:4000",
			headers: map[string]string{"X-Forwarded-Ssl": "on", "X-Forwarded-Protocol": "https", "X-Url-Scheme": "https"},
			want:    "http://tally.example"},
		{name: "a trusted proxy's X-Forwarded-Proto", remote: "10.1.2.3:4000",
			headers: map[string]string{"X-Forwarded-Proto": "https"}, want: "https://tally.example"},
		{name: "a trusted proxy's plain HTTP", remote: "10.1.2.3:4000",
			headers: map[string]string{"X-Forwarded-Proto": "http"}, want: "http://tally.example"},
		{name: "a trusted proxy's X-Forwarded-Ssl", remote: "10.1.2.3:4000",
			headers: map[string]string{"X-Forwarded-Ssl": "on"}, want: "http://tally.example"},
		{name: "TLS", remote: "203.0.113.7:4000", tls: true, want: "https://tally.example"},
		{name: "the public URL", remote: "203.0.113.7:4000", public: "https://stats.example/",
			headers: map[string]string{"X-Forwarded-Proto": "http"}, want: "https://stats.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "http://tally.example/api/v1/sites", nil)
			r.RemoteAddr = tc.remote
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			c := echo.New().NewContext(r, httptest.NewRecorder())
			if got := BaseURL(c, tc.public, trusted); got != tc.want {
				t.Errorf("BaseURL = %q, want %q", got, tc.want)
			}
			if got, want := plainHTTP(r, trusted), tc.want[:5] == "http:"; tc.public == "" && got != want {
				t.Errorf("plainHTTP = %v, want %v: the redirect and the shown URLs must agree", got, want)
			}
		})
	}
}
