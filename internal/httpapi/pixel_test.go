package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"image/gif"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/ingest"
)

// recording validates the tracker's events as the service would, and keeps
// each one it was given, and each request refused before it.
type recording struct {
	validating
	got     []ingest.Input
	refused [][]string
}

func (r *recording) TrackBrowser(ctx context.Context, in ingest.Input, spend ingest.RevenueAllowance) (string, error) {
	r.got = append(r.got, in)
	return r.validating.TrackBrowser(ctx, in, spend)
}

func (r *recording) RefusedRequest(_ *auth.Principal, sites []string, _ error) {
	r.refused = append(r.refused, sites)
}

func pixelRequest(t *testing.T, method, query string, header ...string) (*httptest.ResponseRecorder, *recording) {
	t.Helper()
	rec := &recording{}
	s := New(Deps{Auth: stubAuth{}, Ingest: rec, Stats: struct{ Stats }{}, Goals: struct{ Goals }{}, Revenue: struct{ Revenue }{},
		SitesAPI: struct{ SitesAPI }{}, Limiter: allowAll{}, Log: discardLog(), MaxEventBody: 1024})
	req := httptest.NewRequest(method, "/p.gif?"+query, nil)
	req.Header.Set("User-Agent", "Mozilla/5.0")
	req.Header.Set("Accept-Language", "en")
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	return w, rec
}

// The pixel's query string is the event /e would be sent: a pageview
// unless it names an event, its page the url or else the Referer.
func TestPixelInput(t *testing.T) {
	tests := []struct {
		name   string
		query  string
		header []string
		want   ingest.Input
	}{
		{"a pageview", "site_id=s1&url=https%3A%2F%2Fexample.com%2Fa&referrer=https%3A%2F%2Fnews.example.org%2F&utm_source=x", nil,
			ingest.Input{Pageview: true, SiteID: "s1", URL: "https://example.com/a", Referrer: "https://news.example.org/", EventName: "pageview"}},
		{"a custom event", "site_id=s1&url=https%3A%2F%2Fexample.com%2Fa&event_name=Newsletter+open", nil,
			ingest.Input{SiteID: "s1", URL: "https://example.com/a", EventName: "Newsletter open"}},
		{"the page from the Referer", "site_id=s1", []string{"Referer", "https://example.com/b"},
			ingest.Input{Pageview: true, SiteID: "s1", URL: "https://example.com/b", EventName: "pageview"}},
		{"the url over the Referer", "site_id=s1&url=https%3A%2F%2Fexample.com%2Fa", []string{"Referer", "https://example.com/b"},
			ingest.Input{Pageview: true, SiteID: "s1", URL: "https://example.com/a", EventName: "pageview"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, rec := pixelRequest(t, http.MethodGet, tt.query, tt.header...)
			if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), pixelGIF) {
				t.Fatalf("status %d, body %q", w.Code, w.Body.Bytes())
			}
			if len(rec.got) != 1 {
				t.Fatalf("%d events handed to the service, want 1", len(rec.got))
			}
			tt.want.UserAgent, tt.want.IPAddress, tt.want.AcceptsLanguage = "Mozilla/5.0", "192.0.2.1", true
			if diff := cmp.Diff(tt.want, rec.got[0]); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
		})
	}
}

// What the pixel does not take is a 400 naming it, counted for the site
// named; nothing reaches the service.
func TestPixelRefusesScriptFields(t *testing.T) {
	for query, field := range map[string]string{
		"props=x":              "props",
		"props%5Bplan%5D=pro":  "props",
		"props.plan=pro":       "props",
		"revenue%5Bamount%5D=": "revenue",
		"scroll_depth=50":      "scroll_depth",
		"visitor_id=abc":       "visitor_id",
		// named, with a value url.Values cannot decode
		"props=%zz":          "props",
		"revenue=1;2":        "revenue",
		"hash_routes%5B=%zz": "hash_routes",
		// before a parameter the pixel reads given twice
		"url=https%3A%2F%2Fexample.com%2F&checkout_session_id=cs_1": "checkout_session_id",
	} {
		w, rec := pixelRequest(t, http.MethodGet, "site_id=s1&url=https%3A%2F%2Fexample.com%2F&"+query)
		var body struct {
			Error struct{ Code, Field string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != http.StatusBadRequest ||
			body.Error.Code != "invalid_request" || body.Error.Field != field {
			t.Errorf("%s: %d %s, want 400 naming %s", query, w.Code, w.Body, field)
		}
		if len(rec.got) != 0 || len(rec.refused) != 1 || !cmp.Equal(rec.refused[0], []string{"s1"}) {
			t.Errorf("%s: handed %d events to the service, counted refusals %v", query, len(rec.got), rec.refused)
		}
	}
}

// HEAD answers the image's headers and records nothing, whatever it asks.
func TestPixelHead(t *testing.T) {
	w, rec := pixelRequest(t, http.MethodHead, "props=x")
	h := w.Header()
	if w.Code != http.StatusOK || w.Body.Len() != 0 || h.Get("Content-Type") != "image/gif" || h.Get("Content-Length") != "43" ||
		h.Get("Cache-Control") != "no-store, max-age=0" || h.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
		t.Errorf("HEAD: %d %v %q", w.Code, h, w.Body.Bytes())
	}
	if len(rec.got)+len(rec.refused) != 0 {
		t.Errorf("HEAD handed %d events to the service and counted %d refusals", len(rec.got), len(rec.refused))
	}
}

// A parameter the pixel reads that cannot be read as one value — given
// twice, or with a bad escape or a ';', which url.Values would drop — is a
// 400 naming it: dropped, an event_name would record a pageview and a url
// the Referer's page. Nothing reaches the service.
func TestPixelUnreadableParameters(t *testing.T) {
	page := "url=https%3A%2F%2Fexample.com%2Fa"
	for query, field := range map[string]string{
		"site_id=s1&" + page + "&event_name=Sign%zzup":          "event_name",
		"site_id=s1&url=https%3A%2F%2Fexample.com%2F%zz":        "url",
		"site_id=s1&url=https://example.com/a;b":                "url",
		"site_id=s1;x&" + page:                                  "site_id",
		"site_id=s1&" + page + "&event_name=A&event_name=B":     "event_name",
		"site_id=s1&" + page + "&url=https%3A%2F%2Fevil.net%2F": "url",
		"site_id=s1&site_id=s2&" + page:                         "site_id",
		"site_id=s1&" + page + "&referrer=a&referrer=b":         "referrer",
		"site_id=s1&" + page + "&event_name=&event_name=A":      "event_name",
	} {
		w, rec := pixelRequest(t, http.MethodGet, query, "Referer", "https://example.com/b")
		var body struct {
			Error struct{ Code, Field string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != http.StatusBadRequest ||
			body.Error.Code != "invalid_request" || body.Error.Field != field {
			t.Errorf("%s: %d %q, want 400 naming %s", query, w.Code, w.Body.Bytes(), field)
		}
		if len(rec.got) != 0 || len(rec.refused) != 1 {
			t.Errorf("%s: handed %d events to the service, counted %d refusals; want 0 and 1", query, len(rec.got), len(rec.refused))
		}
	}
}

// A referrer the pixel cannot decode is dropped, as one that is no URL
// is, and the event counts; so do parameters it does not read, however
// written.
func TestPixelDropsUnreadableReferrer(t *testing.T) {
	for _, query := range []string{
		"site_id=s1&url=https%3A%2F%2Fexample.com%2Fa&referrer=https%3A%2F%2Fnews.example.org%2F%zz",
		"site_id=s1&url=https%3A%2F%2Fexample.com%2Fa&referrer=https://news.example.org/a;b",
		"site_id=s1&url=https%3A%2F%2Fexample.com%2Fa&cb=1&cb=2&x%zz=1&amp;y=2",
	} {
		w, rec := pixelRequest(t, http.MethodGet, query)
		if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), pixelGIF) || len(rec.got) != 1 {
			t.Fatalf("%s: %d %q, %d events; want the image and 1", query, w.Code, w.Body.Bytes(), len(rec.got))
		}
		want := ingest.Input{Pageview: true, SiteID: "s1", URL: "https://example.com/a", EventName: "pageview",
			UserAgent: "Mozilla/5.0", IPAddress: "192.0.2.1", AcceptsLanguage: true}
		if diff := cmp.Diff(want, rec.got[0]); diff != "" {
			t.Errorf("%s: input (-want +got):\n%s", query, diff)
		}
	}
}

// The image is what the README says it is: a 43-byte GIF of one pixel,
// transparent.
func TestPixelGIF(t *testing.T) {
	g, err := gif.DecodeAll(bytes.NewReader(pixelGIF))
	if err != nil {
		t.Fatal(err)
	}
	if len(pixelGIF) != 43 || len(g.Image) != 1 || g.Config.Width != 1 || g.Config.Height != 1 {
		t.Fatalf("%d bytes, %d frames of %dx%d; want 43 bytes, 1 frame of 1x1", len(pixelGIF), len(g.Image), g.Config.Width, g.Config.Height)
	}
	if _, _, _, alpha := g.Image[0].At(0, 0).RGBA(); alpha != 0 {
		t.Errorf("the pixel's alpha is %d, want 0 (transparent)", alpha)
	}
}
