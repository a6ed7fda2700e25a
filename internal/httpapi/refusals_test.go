package httpapi

import (
	"slices"
	"testing"
)

func TestBodySites(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		batch bool
		want  []string
	}{
		{"event", `{"url":"https://a.example/","site_id":"s1","props":{"site_id":"not-me"}}`, false, []string{"s1"}},
		{"nested objects before the id", `{"props":{"a":{"b":[1,{"site_id":"x"}]}},"site_id":"s2"}`, false, []string{"s2"}},
		{"cut off after the id", `{"site_id":"s3","url":"https://a.exa`, false, []string{"s3"}},
		{"invalid before the id", `{"url":,"site_id":"s4"}`, false, nil},
		{"not a string", `{"site_id":42}`, false, nil},
		{"batch", `{"events":[{"site_id":"a"},{"url":"u","site_id":"b","props":{"site_id":"c"}},{"site_id":"a"}]}`, true, []string{"a", "b", "a"}},
		{"batch key elsewhere", `{"other":[{"site_id":"x"}],"events":[{"site_id":"y"}]}`, true, []string{"y"}},
		{"batch cut off", `{"events":[{"site_id":"a"},{"site_id":"b","url":"htt`, true, []string{"a", "b"}},
		{"event read as batch", `{"site_id":"s"}`, true, nil},
		{"not JSON", `site_id=s`, false, nil},
	}
	for _, c := range cases {
		if got := bodySites([]byte(c.body), c.batch); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
