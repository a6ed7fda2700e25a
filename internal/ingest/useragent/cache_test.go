package useragent

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"ascii cut", "abcdef", 5, "abcde"},
		{"before two-byte rune", "abcdé", 5, "abcd"},  // é is 2 bytes at 4..5
		{"after two-byte rune", "abcdéf", 6, "abcdé"}, // cut falls on 'f'
		{"inside four-byte rune", "ab😀cd", 4, "ab"},   // 😀 is 4 bytes at 2..5
		{"invalid continuation bytes", "\x80\x80\x80\x80\x80\x80", 5, "\x80\x80\x80\x80\x80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := truncate(tt.in, tt.n); got != tt.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}

func TestParseLongUACachesTruncatedKey(t *testing.T) {
	p, err := New(16)
	if err != nil {
		t.Fatal(err)
	}
	// The multi-byte rune straddles byte 512, so the key must stop before it.
	long := strings.Repeat("a", MaxLength-1) + "é" + strings.Repeat("b", 100)
	p.Parse(long)
	keys := slices.Collect(p.cache.Keys())
	if len(keys) != 1 {
		t.Fatalf("cache holds %d keys, want 1", len(keys))
	}
	if k := keys[0]; len(k) != MaxLength-1 || !utf8.ValidString(k) {
		t.Errorf("cache key has %d bytes (valid UTF-8: %t), want %d valid bytes", len(k), utf8.ValidString(k), MaxLength-1)
	}
	// Headers that differ only past the limit share one entry.
	p.Parse(long + "more")
	if n := cached(p); n != 1 {
		t.Errorf("cache holds %d keys after a longer variant, want 1", n)
	}
}

// cached counts the entries of p's cache once its pending evictions ran.
func cached(p *Parser) int {
	p.cache.CleanUp()
	return p.cache.EstimatedSize()
}

func TestParseCacheIsBounded(t *testing.T) {
	p, err := New(4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		p.Parse("curl/8." + strconv.Itoa(i))
	}
	if n := cached(p); n != 4 {
		t.Errorf("cache holds %d entries, want 4", n)
	}
	// An evicted entry parses again to the same answer.
	want := Info{Browser: "curl", BrowserVersion: "8.0", Bot: true, BotCategory: OtherBot}
	if diff := cmp.Diff(want, p.Parse("curl/8.0")); diff != "" {
		t.Errorf("re-parse mismatch (-want +got):\n%s", diff)
	}
}

func TestParseConcurrent(t *testing.T) {
	p := testParser()
	uas := []string{chromeWindows, "curl/8.5.0", "python-requests/2.31.0", chromeWindows + " Edg/120.0.2210.91"}
	want := make([]Info, len(uas))
	for i, ua := range uas {
		want[i] = p.Parse(ua)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				j := (g + i) % len(uas)
				if got := p.Parse(uas[j]); got != want[j] {
					t.Errorf("Parse(%q) = %+v, want %+v", uas[j], got, want[j])
					return
				}
			}
		})
	}
	wg.Wait()
}
