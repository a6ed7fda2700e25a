package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
)

// The rule of text.go: controls, bidirectional controls and line
// separators are percent-encoded in a URL's parts and replaced elsewhere;
// every other character, any script's letters included, is kept.
func TestUnsafeTextRule(t *testing.T) {
	for _, tc := range []struct {
		name, in, url, plain string
	}{
		{"plain ASCII", "/pricing", "/pricing", "/pricing"},
		{"letters of other scripts", "/café/東京/مرحبا", "/café/東京/مرحبا", "/café/東京/مرحبا"},
		{"an emoji with a joiner", "/👩‍💻", "/👩‍💻", "/👩‍💻"},
		{"a newline", "/a\nb", "/a%0Ab", "/a b"},
		{"a carriage return and a tab", "/a\r\tb", "/a%0D%09b", "/a  b"},
		{"NUL and DEL", "a\x00b\x7f", "a%00b%7F", "a\uFFFDb\uFFFD"},
		{"a C1 control (NEL, a line break)", "a\u0085b", "a%C2%85b", "a b"},
		{"a C1 control", "a\u009Bb", "a%C2%9Bb", "a\uFFFDb"},
		{"right-to-left override", "/admin\u202Etxt.exe", "/admin%E2%80%AEtxt.exe", "/admin\uFFFDtxt.exe"},
		{"the bidi embeddings, isolates and marks", "\u200E\u200F\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069\u061C",
			"%E2%80%8E%E2%80%8F%E2%80%AA%E2%80%AB%E2%80%AC%E2%80%AD%E2%81%A6%E2%81%A7%E2%81%A8%E2%81%A9%D8%9C",
			"\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"line and paragraph separators", "a\u2028b\u2029c", "a%E2%80%A8b%E2%80%A9c", "a b c"},
		{"vertical tab and form feed", "a\vb\fc", "a%0Bb%0Cc", "a b c"},
		{"escape", "a\x1b[2Jb", "a%1B[2Jb", "a\uFFFD[2Jb"},
		{"bytes that are no UTF-8", "caf\xe9", "caf%E9", "caf\uFFFD"},
		{"a replacement character as sent", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
		{"percent signs are left as they are", "/100%25/%0A", "/100%25/%0A", "/100%25/%0A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := urlText(tc.in); got != tc.url {
				t.Errorf("urlText(%q) = %q, want %q", tc.in, got, tc.url)
			}
			if got := PlainText(tc.in); got != tc.plain {
				t.Errorf("PlainText(%q) = %q, want %q", tc.in, got, tc.plain)
			}
		})
	}
}

// An event's text reaches the row as the rule has it, whatever field it
// came in: the path (decoded from %0A, or a raw U+202E) and its hash
// route, the host, the referrer, the UTM parameters, the event's name and
// its props. A prop's value is looked up by its key as sent.
func TestUnsafeTextInEvents(t *testing.T) {
	e := newTestEnricher(t)
	site := model.Site{ID: "s1", Domain: "example.com"}
	in := Input{SiteID: "s1", EventName: "sign\nup",
		URL: "https://shop\u202E.example.com/pay%0A%0AFake%20line/\u202Egnp.exe?utm_source=mail%0Aer&utm_campaign=spr%E2%80%AEing" +
			"#/route%E2%80%A8x",
		Referrer:   "https://www.blog\u202E.example.org/post%0A1",
		HashRoutes: true,
		Props:      map[string]any{"plan\u202E": "pro\r\nmax", "café": "crème", "z": "\u2067x\u2069"}}
	ev, err := validate(in)
	if err != nil {
		t.Fatal(err)
	}
	if ev.name != "sign up" {
		t.Errorf("event name %q", ev.name)
	}
	if diff := cmp.Diff([]string{"café", "plan\uFFFD", "z"}, ev.propKeys); diff != "" {
		t.Errorf("prop keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"crème", "pro  max", "\uFFFDx\uFFFD"}, ev.propValues); diff != "" {
		t.Errorf("prop values (-want +got):\n%s", diff)
	}
	d := &draft{ev: &ev, at: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC), site: &site}
	if err := e.enrich(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if want := "/pay%0A%0AFake line/%E2%80%AEgnp.exe#/route%E2%80%A8x"; d.pathname != want {
		t.Errorf("path %q, want %q", d.pathname, want)
	}
	if want := "/pay%0A%0AFake line/%E2%80%AEgnp.exe#/route%E2%80%A8x"; pathnameOf(&ev) != want {
		t.Errorf("the path exclusions match %q, want the stored %q", pathnameOf(&ev), want)
	}
	want := model.Attribution{Hostname: "shop%E2%80%AE.example.com", Referrer: "blog%E2%80%AE.example.org/post%0A1",
		ReferrerSource: "mail er", SourceType: "referral", UTMSource: "mail er", UTMCampaign: "spr\uFFFDing"}
	if diff := cmp.Diff(want, d.attr); diff != "" {
		t.Errorf("attribution (-want +got):\n%s", diff)
	}
}

// An unknown referrer's host names the source: it is made safe before (and
// then lower-cased, as every host name the classifier gives).
func TestUnsafeTextInTheSourceName(t *testing.T) {
	e := newTestEnricher(t)
	site := model.Site{ID: "s1", Domain: "example.com"}
	ev, err := validate(Input{SiteID: "s1", Pageview: true, URL: "https://example.com/",
		Referrer: "https://gro.\u202Elive.example/x"})
	if err != nil {
		t.Fatal(err)
	}
	d := &draft{ev: &ev, at: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC), site: &site}
	if err := e.enrich(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if d.attr.ReferrerSource != "gro.%e2%80%aelive.example" || d.attr.Referrer != "gro.%E2%80%AElive.example/x" {
		t.Errorf("source %q, referrer %q", d.attr.ReferrerSource, d.attr.Referrer)
	}
}
