package referrer

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testClassifier = sync.OnceValue(func() *Classifier {
	c, err := New()
	if err != nil {
		panic(err)
	}
	return c
})

// listedHosts is the set of hosts the vendored list and the AI list name
// verbatim, before any aliasing.
func listedHosts(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := loadEntries()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, e := range entries {
		listed[e.host] = true
	}
	for host := range aiAssistants {
		listed[host] = true
	}
	return listed
}

func TestFromHost(t *testing.T) {
	c := testClassifier()
	listed := listedHosts(t)
	tests := []struct {
		name     string
		host     string
		want     Source
		unlisted string // a host the case relies on the list NOT naming verbatim
	}{
		{"empty is direct", "", Source{DirectName, Direct}, ""},
		{"blank is direct", "  ", Source{DirectName, Direct}, ""},
		{"exact search", "google.com", Source{"Google", Search}, ""},
		{"exact www", "www.google.de", Source{"Google", Search}, ""},
		{"upper case", "WWW.Google.COM", Source{"Google", Search}, ""},
		{"port", "www.google.com:443", Source{"Google", Search}, ""},
		{"trailing dot", "google.de.", Source{"Google", Search}, ""},
		{"exact social", "news.ycombinator.com", Source{"Hacker News", Social}, ""},
		{"link shim listed", "l.facebook.com", Source{"Facebook", Social}, ""},
		{"short link", "t.co", Source{"Twitter", Social}, ""},
		{"m. prefix stripped", "m.youtube.com", Source{"Youtube", Social}, "m.youtube.com"},
		{"l. prefix stripped", "l.reddit.com", Source{"Reddit", Social}, "l.reddit.com"},
		{"www. prefix stripped", "www.youtube.com", Source{"Youtube", Social}, "www.youtube.com"},
		{"bare host of www-only entry", "baidu.com", Source{"Baidu", Search}, "baidu.com"},
		{"parent domain", "xyz.google.de", Source{"Google", Search}, "xyz.google.de"},
		{"grandparent domain", "a.b.news.ycombinator.com", Source{"Hacker News", Social}, "b.news.ycombinator.com"},
		{"exact beats parent", "mail.google.com", Source{"Gmail", Referral}, ""},
		{"medium unknown is referral", "support.google.com", Source{"Google", Referral}, ""},
		{"medium referral", "substack.com", Source{"Substack", Referral}, ""},
		{"medium paid is referral", "adroll.com", Source{"AdRoll", Referral}, ""},
		{"upper-case list key", "sozluk.com", Source{"Eksi Sozluk", Social}, ""},
		{"android app referrer", "com.google.android.gm", Source{"Gmail", Referral}, ""},
		{"ai assistant", "chatgpt.com", Source{"ChatGPT", Referral}, ""},
		{"ai assistant old host", "chat.openai.com", Source{"ChatGPT", Referral}, ""},
		{"ai beats parent", "gemini.google.com", Source{"Gemini", Referral}, ""},
		{"ai www", "www.perplexity.ai", Source{"Perplexity", Referral}, ""},
		{"yandex's own short domain", "ya.ru", Source{"Yandex", Search}, "ya.ru"},
		{"yandex country domain", "yandex.com.tr", Source{"Yandex", Search}, "yandex.com.tr"},
		{"google country domain the list lacks", "www.google.al", Source{"Google", Search}, "www.google.al"},
		{"sogou", "www.sogou.com", Source{"Sogou", Search}, "www.sogou.com"},
		{"sogou mobile", "m.sogou.com", Source{"Sogou", Search}, "m.sogou.com"},
		{"kagi", "kagi.com", Source{"Kagi", Search}, "kagi.com"},
		{"startpage", "www.startpage.com", Source{"Startpage", Search}, "www.startpage.com"},
		{"listed search engine keeps its entry", "yandex.ru", Source{"Yandex", Search}, ""},
		{"email on a search engine's domain stays email", "mail.yandex.kz", Source{"Yandex", Referral}, ""},
		{"wikipedia listed language", "en.wikipedia.org", Source{"Wikipedia", Referral}, ""},
		{"wikipedia listed mobile", "en.m.wikipedia.org", Source{"Wikipedia", Referral}, ""},
		{"wikipedia german", "de.wikipedia.org", Source{"Wikipedia", Referral}, "de.wikipedia.org"},
		{"wikipedia french", "fr.wikipedia.org", Source{"Wikipedia", Referral}, "fr.wikipedia.org"},
		{"wikipedia japanese", "ja.wikipedia.org", Source{"Wikipedia", Referral}, "ja.wikipedia.org"},
		{"wikipedia cantonese", "zh-yue.wikipedia.org", Source{"Wikipedia", Referral}, "zh-yue.wikipedia.org"},
		{"wikipedia simple english", "simple.wikipedia.org", Source{"Wikipedia", Referral}, "simple.wikipedia.org"},
		{"wikipedia german mobile", "de.m.wikipedia.org", Source{"Wikipedia", Referral}, "de.m.wikipedia.org"},
		{"wikipedia portuguese mobile", "pt.m.wikipedia.org", Source{"Wikipedia", Referral}, "pt.m.wikipedia.org"},
		{"wikipedia japanese mobile upper case", "JA.M.Wikipedia.org", Source{"Wikipedia", Referral}, "ja.m.wikipedia.org"},
		{"wikipedia portal", "www.wikipedia.org", Source{"Wikipedia", Referral}, "wikipedia.org"},
		{"wikipedia look-alike", "en.wikipedia.org.example.com", Source{"en.wikipedia.org.example.com", Referral}, ""},
		{"unknown", "example.com", Source{"example.com", Referral}, "example.com"},
		{"unknown www and port", "www.Example.com:8080", Source{"example.com", Referral}, "example.com"},
		{"unknown subdomain kept", "blog.example.co.uk", Source{"blog.example.co.uk", Referral}, "example.co.uk"},
		{"public suffix never matches", "co.uk", Source{"co.uk", Referral}, "co.uk"},
		{"parent under two-label suffix", "xyz.google.co.uk", Source{"Google", Search}, "xyz.google.co.uk"},
		{"listed public suffix exact", "bsky", Source{"Bluesky", Social}, ""},
		{"listed public suffix is no parent", "someone.bsky", Source{"someone.bsky", Referral}, "someone.bsky"},
		{"ipv4 with port", "192.168.0.1:3000", Source{"192.168.0.1", Referral}, ""},
		{"ipv6 with port", "[2001:db8::1]:8080", Source{"2001:db8::1", Referral}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if listed[tt.unlisted] {
				t.Fatalf("test relies on %q not being listed, but it is: pick another host", tt.unlisted)
			}
			if diff := cmp.Diff(tt.want, c.FromHost(tt.host)); diff != "" {
				t.Errorf("FromHost(%q) mismatch (-want +got):\n%s", tt.host, diff)
			}
		})
	}
}

func TestParentWalkStopsAtRegistrableDomain(t *testing.T) {
	c := newClassifier([]hostEntry{
		{"blogspot.com", Source{"Blogger", Social}},
		{"example.com", Source{"Example", Referral}},
	})
	tests := []struct {
		host string
		want Source
	}{
		{"blogspot.com", Source{"Blogger", Social}},
		{"someone.blogspot.com", Source{"someone.blogspot.com", Referral}},
		{"a.b.example.com", Source{"Example", Referral}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, c.FromHost(tt.host)); diff != "" {
				t.Errorf("FromHost(%q) mismatch (-want +got):\n%s", tt.host, diff)
			}
		})
	}
}

// A site the list names by one language host and its mobile twin stands
// for its registrable domain; without the twin, with another source under
// the domain, or with the domain listed itself, nothing is inferred.
func TestLanguageSites(t *testing.T) {
	wiki := Source{"Wiki", Referral}
	c := newClassifier([]hostEntry{
		{"en.wiki.example", wiki},
		{"en.m.wiki.example", wiki},
		{"search.portal.example", Source{"Portal", Search}},
		{"en.mixed.example", Source{"Mixed", Referral}},
		{"en.m.mixed.example", Source{"Mixed", Referral}},
		{"mail.mixed.example", Source{"Mixed Mail", Referral}},
		{"listed.example", Source{"Listed", Social}},
		{"en.listed.example", Source{"Listed English", Referral}},
		{"en.m.listed.example", Source{"Listed English", Referral}},
		{"en.deep.sub.example", Source{"Deep", Referral}},
		{"en.m.deep.sub.example", Source{"Deep", Referral}},
	})
	tests := []struct {
		host string
		want Source
	}{
		{"de.wiki.example", wiki},
		{"de.m.wiki.example", wiki},
		{"wiki.example", wiki},
		{"www.portal.example", Source{"portal.example", Referral}},
		{"de.mixed.example", Source{"de.mixed.example", Referral}},
		{"mail.mixed.example", Source{"Mixed Mail", Referral}},
		{"en.listed.example", Source{"Listed English", Referral}},
		{"de.listed.example", Source{"Listed", Social}},
		{"de.deep.sub.example", Source{"de.deep.sub.example", Referral}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, c.FromHost(tt.host)); diff != "" {
				t.Errorf("FromHost(%q) mismatch (-want +got):\n%s", tt.host, diff)
			}
		})
	}
}

func TestFromUTMSource(t *testing.T) {
	c := testClassifier()
	tests := []struct {
		name string
		utm  string
		want Source
	}{
		{"name", "google", Source{"Google", Search}},
		{"name any case and space", " GOOGLE ", Source{"Google", Search}},
		{"name with space", "hacker news", Source{"Hacker News", Social}},
		{"social name", "facebook", Source{"Facebook", Social}},
		{"name mostly search", "yandex", Source{"Yandex", Search}},
		{"email name", "gmail", Source{"Gmail", Referral}},
		{"ai name", "chatgpt", Source{"ChatGPT", Referral}},
		{"meta ads placement facebook", "fb", Source{"Facebook", Social}},
		{"meta ads placement instagram", "IG", Source{"Instagram", Social}},
		{"meta ads placement messenger", "msg", Source{"Messenger", Social}},
		{"host", "google.com", Source{"Google", Search}},
		{"host with subdomain", "www.reddit.com", Source{"Reddit", Social}},
		{"language host the list does not name", "de.wikipedia.org", Source{"Wikipedia", Referral}},
		{"ai host as ChatGPT tags links", "chatgpt.com", Source{"ChatGPT", Referral}},
		{"unknown kept as given", " Spring Newsletter ", Source{"Spring Newsletter", Referral}},
		{"unknown host kept as given", "Partner.Example.com", Source{"Partner.Example.com", Referral}},
		{"blank is direct", "  ", Source{DirectName, Direct}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, c.FromUTMSource(tt.utm)); diff != "" {
				t.Errorf("FromUTMSource(%q) mismatch (-want +got):\n%s", tt.utm, diff)
			}
		})
	}
}

func TestEmbeddedList(t *testing.T) {
	c := testClassifier()
	if n := len(c.hosts); n < 1700 {
		t.Errorf("classifier knows %d hosts, want at least 1,700 (list is 2,381 minus path keys)", n)
	}
	for host, s := range c.hosts {
		if host != strings.ToLower(host) || strings.Contains(host, "/") {
			t.Errorf("host key %q is not a lower-case bare host", host)
		}
		if s.Name == "" || (s.Type != Search && s.Type != Social && s.Type != Referral) {
			t.Errorf("host %q maps to %+v", host, s)
		}
	}
	for host := range aiAssistants {
		if host != strings.ToLower(host) {
			t.Errorf("AI host %q must be lower case", host)
		}
	}
}

func TestMostCommonTies(t *testing.T) {
	if got := mostCommon(map[Type]int{Referral: 1, Search: 1}, compareTypes); got != Search {
		t.Errorf("tie between referral and search = %q, want search", got)
	}
	if got := mostCommon(map[Type]int{Referral: 2, Search: 1}, compareTypes); got != Referral {
		t.Errorf("majority referral = %q, want referral", got)
	}
	if got := mostCommon(map[string]int{"Ukr.net": 1, "UKR.net": 1}, strings.Compare); got != "UKR.net" {
		t.Errorf("spelling tie = %q, want the first in byte order", got)
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := map[string]string{
		"Example.COM":        "example.com",
		" example.com:8080 ": "example.com",
		"example.com.":       "example.com",
		"[::1]:443":          "::1",
		"[::1]":              "::1",
		"2001:db8::1":        "2001:db8::1",
		"":                   "",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := normalizeHost(in); got != want {
				t.Errorf("normalizeHost(%q) = %q, want %q", in, got, want)
			}
		})
	}
}
