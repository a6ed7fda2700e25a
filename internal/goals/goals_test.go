package goals

import (
	"regexp"
	"testing"
)

func TestPathRegexp(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"/blog/*", []string{"/blog/a", "/blog/a-b.html"}, []string{"/blog/a/b", "/blog/", "/blog", "/blogs/a"}},
		{"/blog/**", []string{"/blog/a", "/blog/a/b", "/blog/a/b/c"}, []string{"/blog", "/blogs/a"}},
		{"/signup", []string{"/signup"}, []string{"/signup/", "/signups", "/x/signup"}},
		{"/shop/*/checkout", []string{"/shop/42/checkout"}, []string{"/shop/42/43/checkout", "/shop/checkout"}},
		{"/docs/**/install", []string{"/docs/v1/install", "/docs/v1/linux/install"}, []string{"/docs/install/x"}},
		{"/a.b+(c)", []string{"/a.b+(c)"}, []string{"/aXb+(c)", "/a.bb(c)"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re := regexp.MustCompile(PathRegexp(tt.pattern))
			for _, p := range tt.match {
				if !re.MatchString(p) {
					t.Errorf("%s does not match %s (regexp %s)", tt.pattern, p, re)
				}
			}
			for _, p := range tt.noMatch {
				if re.MatchString(p) {
					t.Errorf("%s matches %s (regexp %s)", tt.pattern, p, re)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		in    Input
		field string
	}{
		{Input{Name: "x", Type: "pageview", PagePath: "/a"}, "site_id"},
		{Input{SiteID: "s", Type: "pageview", PagePath: "/a"}, "goal_name"},
		{Input{SiteID: "s", Name: "x", Type: "click", PagePath: "/a"}, "goal_type"},
		{Input{SiteID: "s", Name: "x", Type: "pageview"}, "page_path"},
		{Input{SiteID: "s", Name: "x", Type: "pageview", PagePath: "blog"}, "page_path"},
		{Input{SiteID: "s", Name: "x", Type: "pageview", PagePath: "/a?b=1"}, "page_path"},
		{Input{SiteID: "s", Name: "x", Type: "pageview", PagePath: "/a/***"}, "page_path"},
		{Input{SiteID: "s", Name: "x", Type: "pageview", PagePath: "/a", EventName: "e"}, "event_name"},
		{Input{SiteID: "s", Name: "x", Type: "custom_event"}, "event_name"},
		{Input{SiteID: "s", Name: "x", Type: "custom_event", EventName: "pageview"}, "event_name"},
		{Input{SiteID: "s", Name: "x", Type: "custom_event", EventName: "e", PagePath: "/a"}, "page_path"},
	} {
		_, err := validate(tc.in)
		if err == nil {
			t.Errorf("%+v: valid, want an error on %s", tc.in, tc.field)
			continue
		}
		if got := fieldOf(err); got != tc.field {
			t.Errorf("%+v: error on %q (%v), want %q", tc.in, got, err, tc.field)
		}
	}
	if _, err := validate(Input{SiteID: "s", Name: " Signup ", Type: "custom_event", EventName: "signup"}); err != nil {
		t.Errorf("valid custom event goal: %v", err)
	}
}
