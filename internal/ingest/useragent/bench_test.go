package useragent

import (
	"strconv"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	p := testParser()
	b.Run("cached", func(b *testing.B) {
		uas := []string{
			chromeWindows,
			"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1.2 Mobile/15E148 Safari/604.1",
			"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
			"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		}
		for _, ua := range uas {
			p.Parse(ua)
		}
		i := 0
		for b.Loop() {
			p.Parse(uas[i%len(uas)])
			i++
		}
	})
	b.Run("uncached", func(b *testing.B) {
		// A build number no one has seen makes every header new to both caches.
		prefix := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0."
		i := 0
		for b.Loop() {
			p.Parse(prefix + strconv.Itoa(i) + ".0 Safari/537.36")
			i++
		}
	})
}
