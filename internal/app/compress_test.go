package app_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/tracker"
)

// fetched is an answer as it came over the wire, body undecoded.
type fetched struct {
	status int
	header http.Header
	body   []byte
}

// fetch sends a request with exactly this Accept-Encoding (none when
// empty), leaving the body as it came, and the cookies given.
func fetch(t *testing.T, method, u, encoding string, body string, header http.Header, cookies map[string]*http.Cookie) fetched {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	for _, ck := range cookies {
		req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	}
	tr := &http.Transport{DisableCompression: true} // adds no Accept-Encoding of its own
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fetched{res.StatusCode, res.Header, b}
}

// varies reports whether an answer says Vary: Accept-Encoding.
func (f fetched) varies() bool {
	for _, v := range f.header.Values("Vary") {
		for _, part := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), "Accept-Encoding") {
				return true
			}
		}
	}
	return false
}

// decoded is the body without its gzip encoding.
func (f fetched) decoded(t *testing.T) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(f.body))
	if err != nil {
		t.Fatalf("a gzip answer that is not gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Compression: the dashboard's pages and cards, the API's JSON and CSV
// reports, its OpenAPI document, the dashboard's assets and the tracking
// script come back gzipped to a client that accepts gzip, decoding to what
// a client without it gets (a page's CSRF tokens aside: masked anew in
// each, and each accepted); the zip download is not compressed again; the
// ingest endpoints' answers are neither compressed nor vary by encoding.
func TestCompressedAnswers(t *testing.T) {
	h := newHarness(t)
	// 30 pageviews of 30 pages on 2 May: the pages report holds 30 rows,
	// some 3 KB of JSON and 2 KB of CSV, past the 1 KB below which nothing
	// is compressed
	var views [][4]string
	for i := range 30 {
		views = append(views, [4]string{"v" + strconv.Itoa(i), "2026-05-02 10:00:00", "/blog/a-rather-long-article-title-number-" + strconv.Itoa(i), ""})
	}
	sendPageviews(t, h, h.siteID, views...)
	h.waitCount(30, "SELECT count() FROM events WHERE site_id = ?", string(h.siteID))

	w := newWebUser(t, h)
	w.login(h.email)
	site := "/sites/" + string(h.siteID)
	bearer := http.Header{"Authorization": {"Bearer " + h.key}}
	q := "?site_id=" + string(h.siteID) + "&date_from=2026-05-01&date_to=2026-05-07"
	for _, tc := range []struct {
		path   string
		header http.Header
		page   bool // carries CSRF tokens
	}{
		{site + "?range=custom&from=2026-05-01&to=2026-05-07&source=%3Cguess%3E", nil, true},
		{site + "/settings", nil, true},
		{site + "/cards/pages?range=custom&from=2026-05-01&to=2026-05-07", nil, false},
		{site + "/cards/locations?range=custom&from=2026-05-01&to=2026-05-07", nil, false}, // the world map
		{"/assets/app.css", nil, false},
		{"/api/v1/stats/pages" + q, bearer, false},
		{"/api/v1/stats/pages" + q + "&format=csv", bearer, false},
		{"/api/v1/openapi.json", nil, false},
	} {
		gz := fetch(t, http.MethodGet, h.srv.URL+tc.path, "gzip", "", tc.header, w.cookies)
		plain := fetch(t, http.MethodGet, h.srv.URL+tc.path, "identity", "", tc.header, w.cookies)
		if gz.status != http.StatusOK || plain.status != http.StatusOK || gz.header.Get("Content-Encoding") != "gzip" ||
			plain.header.Get("Content-Encoding") != "" || !gz.varies() || !plain.varies() {
			t.Errorf("%s: %d %q and %d %q, Vary %q and %q; want 200 gzip and 200 plain, both Vary: Accept-Encoding", tc.path,
				gz.status, gz.header.Get("Content-Encoding"), plain.status, plain.header.Get("Content-Encoding"),
				gz.header.Values("Vary"), plain.header.Values("Vary"))
			continue
		}
		if gz.header.Get("Content-Type") != plain.header.Get("Content-Type") || len(gz.body) >= len(plain.body) {
			t.Errorf("%s: %s in %d bytes, %s in %d", tc.path, gz.header.Get("Content-Type"), len(gz.body),
				plain.header.Get("Content-Type"), len(plain.body))
		}
		got, want := string(gz.decoded(t)), string(plain.body)
		if tc.page {
			a, b := csrfField.FindAllStringSubmatch(got, -1), csrfField.FindAllStringSubmatch(want, -1)
			if len(a) == 0 || len(a) != len(b) || a[0][1] == b[0][1] {
				t.Fatalf("%s: tokens %v and %v; want as many in both, and not the same", tc.path, a, b)
			}
			// both pages' tokens are the session's: a form with either is taken
			for _, token := range []string{a[0][1], b[0][1]} {
				w.expect(http.MethodPost, site+"/settings", url.Values{"domain": {"example.com"}, "timezone": {"UTC"},
					"currency": {"EUR"}, "csrf": {token}}, http.StatusSeeOther)
			}
			got = csrfField.ReplaceAllString(got, "csrf")
			want = csrfField.ReplaceAllString(want, "csrf")
		}
		if got != want {
			t.Errorf("%s: the gzipped answer decodes to %d bytes other than the %d of the plain one", tc.path, len(got), len(want))
		}
	}

	// the zip of every report is compressed already
	if zip := fetch(t, http.MethodGet, h.srv.URL+site+"/download?range=7d", "gzip", "", nil, w.cookies); zip.status != http.StatusOK ||
		zip.header.Get("Content-Type") != "application/zip" || zip.header.Get("Content-Encoding") != "" {
		t.Errorf("the download: %d %s, Content-Encoding %q", zip.status, zip.header.Get("Content-Type"), zip.header.Get("Content-Encoding"))
	}

	// the tracking script: compressed once, with an ETag of its own
	js := fetch(t, http.MethodGet, h.srv.URL+"/js/tally.js", "gzip, br", "", nil, nil)
	raw := fetch(t, http.MethodGet, h.srv.URL+"/js/tally.js", "", "", nil, nil)
	if js.header.Get("Content-Encoding") != "gzip" || string(js.decoded(t)) != string(tracker.Script) || !js.varies() ||
		js.header.Get("ETag") != tracker.GzipETag || raw.header.Get("Content-Encoding") != "" || string(raw.body) != string(tracker.Script) ||
		raw.header.Get("ETag") != tracker.ETag || !raw.varies() {
		t.Errorf("the script: %v (%d bytes) and %v (%d bytes)", js.header, len(js.body), raw.header, len(raw.body))
	}
	if again := fetch(t, http.MethodGet, h.srv.URL+"/js/tally.js", "gzip", "", http.Header{"If-None-Match": {tracker.GzipETag}}, nil); again.status != http.StatusNotModified {
		t.Errorf("revalidating the gzipped script: %d, want 304", again.status)
	}

	// ingest: nothing compressed, nothing varies by encoding
	event := `{"site_id":"` + string(h.siteID) + `","event_name":"pageview","url":"https://example.com/compressed"}`
	for _, tc := range []struct {
		path   string
		header http.Header
		want   int
	}{
		{"/api/v1/events/pageview", http.Header{"Authorization": {"Bearer " + h.key}, "Content-Type": {"application/json"},
			"User-Agent": {chromeUA}}, http.StatusCreated},
		{"/e", http.Header{"Content-Type": {"text/plain"}, "User-Agent": {chromeUA}}, http.StatusAccepted},
	} {
		body := event
		if tc.path == "/api/v1/events/pageview" {
			body = `{"site_id":"` + string(h.siteID) + `","url":"https://example.com/compressed","user_agent":"` + chromeUA + `"}`
		}
		got := fetch(t, http.MethodPost, h.srv.URL+tc.path, "gzip", body, tc.header, nil)
		if got.status != tc.want || got.header.Get("Content-Encoding") != "" || got.varies() {
			t.Errorf("POST %s: %d, Content-Encoding %q, Vary %q; want %d, neither\n%s", tc.path, got.status,
				got.header.Get("Content-Encoding"), got.header.Values("Vary"), tc.want, got.body)
		}
	}
}
