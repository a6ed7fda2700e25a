package referrer

import (
	"slices"
	"strings"
	"testing"
)

// The categories hold the names and hosts a visit's utm_source or stored
// source name is compared with: lower-cased, sorted, never empty, the lists
// kept in Go and the short codes included.
func TestSourceCategories(t *testing.T) {
	c, err := SourceCategories()
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string]struct {
		values []string
		want   []string
	}{
		"search":   {c.Search, []string{"google", "google.com", "google.de", "bing", "duckduckgo", "ya.ru", "kagi.com"}},
		"social":   {c.Social, []string{"facebook", "hacker news", "news.ycombinator.com", "fb", "ig", "li", "tw", "t.co"}},
		"video":    {c.Video, []string{"youtube", "youtube.com", "www.youtube.com", "yt", "twitch.tv", "twitch", "vimeo"}},
		"shopping": {c.Shopping, []string{"amazon", "amazon.com", "www.amazon.de", "etsy.com", "ebay"}},
		"email":    {c.Email, []string{"gmail", "mail.google.com", "outlook.com", "yahoo! mail"}},
	}
	for name, l := range lists {
		if !slices.IsSorted(l.values) {
			t.Errorf("%s is not sorted", name)
		}
		for _, v := range l.values {
			if v == "" || v != strings.ToLower(v) {
				t.Errorf("%s holds %q", name, v)
			}
		}
		for _, w := range l.want {
			if _, found := slices.BinarySearch(l.values, w); !found {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
	for host := range videoHosts {
		if host != strings.ToLower(host) || strings.HasPrefix(host, "www.") {
			t.Errorf("video host %q must be lower case and bare", host)
		}
	}
	for host := range shoppingHosts {
		if host != strings.ToLower(host) || strings.HasPrefix(host, "www.") {
			t.Errorf("shopping host %q must be lower case and bare", host)
		}
	}
}
