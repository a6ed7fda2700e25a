package referrer

import "testing"

func BenchmarkFromHost(b *testing.B) {
	c := testClassifier()
	for _, host := range []string{"www.google.com", "m.youtube.com", "a.b.news.ycombinator.com", "blog.example.com"} {
		b.Run(host, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.FromHost(host)
			}
		})
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(); err != nil {
			b.Fatal(err)
		}
	}
}
