package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGet(t *testing.T) {
	for _, name := range []string{"provider_a", "provider_b", "provider_c", "provider_d"} {
		p, ok := Get(name)
		if !ok {
			t.Fatalf("Get(%q): not found", name)
		}
		if p.Name() != name {
			t.Errorf("Get(%q).Name() = %q", name, p.Name())
		}
	}
	for _, name := range []string{"", "stripe", "provider_e", "Provider_A"} {
		if _, ok := Get(name); ok {
			t.Errorf("Get(%q) found a provider", name)
		}
	}
}

// fixture reads testdata/<provider>/<file>.
func fixture(t testing.TB, provider, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", provider, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtures lists a provider's fixture files.
func fixtures(t testing.TB, provider string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", provider, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures for %s: %v", provider, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}

// parseCase is one fixture and the notification written by hand from it.
type parseCase struct {
	file string
	want Notification
}

// testParse parses every fixture of a provider, and fails when a fixture
// has no case, so none goes untested.
func testParse(t *testing.T, provider string, cases []parseCase) {
	t.Helper()
	p, _ := Get(provider)
	var covered []string
	for _, c := range cases {
		covered = append(covered, c.file)
		t.Run(c.file, func(t *testing.T) {
			got, err := p.Parse(fixture(t, provider, c.file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, f := range fixtures(t, provider) {
		if !slices.Contains(covered, f) {
			t.Errorf("fixture %s has no parse case", f)
		}
	}
}

// payloadCase is a body Parse must reject with ErrPayload.
type payloadCase struct {
	name string
	body string
}

func testPayloadErrors(t *testing.T, provider string, cases []payloadCase) {
	t.Helper()
	p, _ := Get(provider)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := p.Parse([]byte(c.body))
			if !errors.Is(err, ErrPayload) {
				t.Fatalf("Parse = %+v, %v; want an error wrapping ErrPayload", n, err)
			}
		})
	}
}

// verifyCase is one request for Verify; wantErr names a word the error
// message must contain ("" when the request must be accepted).
type verifyCase struct {
	name    string
	header  http.Header
	body    []byte
	secret  string
	now     time.Time
	wantErr string
}

func testVerify(t *testing.T, provider string, cases []verifyCase) {
	t.Helper()
	p, _ := Get(provider)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := p.Verify(c.header, c.body, c.secret, c.now)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrSignature) {
				t.Fatalf("Verify = %v; want an error wrapping ErrSignature", err)
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Verify = %q; want it to say %q", err, c.wantErr)
			}
			if c.secret != "" && strings.Contains(err.Error(), c.secret) {
				t.Errorf("Verify error %q echoes the secret", err)
			}
		})
	}
}

// fuzzParse checks that Parse never panics and that whatever it counts as
// money is recordable.
func fuzzParse(f *testing.F, provider string) {
	p, _ := Get(provider)
	for _, file := range fixtures(f, provider) {
		f.Add(fixture(f, provider, file))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := p.Parse(body)
		if err != nil {
			if !errors.Is(err, ErrPayload) {
				t.Fatalf("Parse error %v does not wrap ErrPayload", err)
			}
			return
		}
		if n.Ignored {
			return
		}
		if n.Amount <= 0 || n.Tax < 0 || n.TransactionID == "" || len(n.Currency) != 3 || n.Type == "" {
			t.Fatalf("Parse counted an unrecordable notification: %+v", n)
		}
		if n.Type == Refund && n.RefundOf == "" {
			t.Fatalf("refund without RefundOf: %+v", n)
		}
	})
}

// checkVerifyError is the fuzz invariant of Verify: no panic, and every
// refusal wraps ErrSignature without echoing the secret.
func checkVerifyError(t *testing.T, err error, secret string) {
	if err == nil {
		return
	}
	if !errors.Is(err, ErrSignature) {
		t.Fatalf("Verify error %v does not wrap ErrSignature", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("Verify error %q echoes the secret", err)
	}
}

func TestVisitorFrom(t *testing.T) {
	tests := []struct {
		maps []map[string]any
		want string
	}{
		{nil, ""},
		{[]map[string]any{{"analytics_vid": "a"}, {"visitor_id": "b"}}, "a"},
		{[]map[string]any{{"visitor_id": " b "}, {"analytics_vid": "a"}}, "b"},
		{[]map[string]any{{"analytics_vid": 12}, {"visitor_id": "b"}}, "b"},
		{[]map[string]any{{"analytics_vid": "  "}, nil, {"analytics_vid": "c"}}, "c"},
	}
	for _, tt := range tests {
		if got := visitorFrom(tt.maps...); got != tt.want {
			t.Errorf("visitorFrom(%v) = %q, want %q", tt.maps, got, tt.want)
		}
	}
}

func TestCheckTimestamp(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, d := range []time.Duration{0, Tolerance, -Tolerance, time.Minute} {
		if err := checkTimestamp("p", now.Add(d).Unix(), now); err != nil {
			t.Errorf("%s away: %v", d, err)
		}
	}
	for _, d := range []time.Duration{Tolerance + time.Second, -Tolerance - time.Second, 240 * time.Hour} {
		if err := checkTimestamp("p", now.Add(d).Unix(), now); !errors.Is(err, ErrSignature) {
			t.Errorf("%s away: %v, want ErrSignature", d, err)
		}
	}
}

// patchJSON decodes a body, lets edit change it and encodes it again.
func patchJSON(t *testing.T, body []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// variantCase patches a fixture and says how its notification differs
// from the one of the fixture as it is.
type variantCase struct {
	name  string
	base  []byte
	patch func(m map[string]any)
	want  func(n *Notification)
}

func testVariants(t *testing.T, provider string, cases []variantCase) {
	t.Helper()
	p, _ := Get(provider)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := p.Parse(c.base)
			if err != nil {
				t.Fatal(err)
			}
			c.want(&want)
			got, err := p.Parse(patchJSON(t, c.base, c.patch))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// VerifyAny accepts a delivery signed with any of a site's secrets, stops at
// the first that verifies it, and otherwise says why without naming a secret:
// a mismatch when none matched, the header's fault whatever the secret, and
// a stale timestamp once a secret matched.
func TestVerifyAny(t *testing.T) {
	p, _ := Get(stripeName)
	body := fixture(t, stripeName, "checkout.session.completed.json")
	now := time.Unix(1763716932, 0)
	live, test, other := "whsec_live_0123456789", "whsec_test_0123456789", "whsec_other_0123456789"
	signed := func(secret string, at time.Time) http.Header {
		return stripeHeader(fmt.Sprintf("t=%d,v1=%s", at.Unix(), signStripe(secret, at.Unix(), body)))
	}
	for _, c := range []struct {
		name    string
		header  http.Header
		secrets []string
		wantErr string
	}{
		{"the first secret", signed(live, now), []string{live, test}, ""},
		{"the second secret", signed(test, now), []string{live, test}, ""},
		{"the last of three", signed(other, now), []string{live, test, other}, ""},
		{"neither", signed(other, now), []string{live, test}, "does not match"},
		{"none set", signed(live, now), nil, "no signing secret"},
		{"no header", http.Header{}, []string{live, test}, "missing Stripe-Signature"},
		{"the second secret, stale", signed(test, now.Add(-time.Hour)), []string{live, test}, "stale timestamp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyAny(p, c.header, body, c.secrets, now)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("VerifyAny: %v, want verified", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("VerifyAny: %v, want %q", err, c.wantErr)
			}
			for _, s := range c.secrets {
				checkVerifyError(t, err, s)
			}
		})
	}
}
