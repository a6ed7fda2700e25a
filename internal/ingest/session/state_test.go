package session

import (
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
)

// TestStoredSize: Compute takes the room of a flush's states by storedSize,
// which is the length appendStored writes, for a state whose entry needs a
// two-byte length and whose times need five bytes.
func TestStoredSize(t *testing.T) {
	a := model.Attribution{Hostname: "example.com", Referrer: "news.ycombinator.com/item", ReferrerSource: "Hacker News",
		SourceType: "social", Browser: "Firefox", CountryCode: "DE", City: "Berlin"}
	for _, s := range []state{
		{attribution: &model.Attribution{}},
		{sid: 1<<64 - 1, start: 1_780_000_000, last: 1_780_001_800, version: 3, pageviews: 200, events: 70_000,
			entry: "/" + strings.Repeat("e", 150), exit: "/pricing", lastPageview: 1_780_001_700, attribution: &a},
	} {
		if got, want := storedSize(&s), len(appendStored(nil, stored{tag: 9, state: s})); got != want {
			t.Errorf("storedSize = %d, want %d", got, want)
		}
	}
}
