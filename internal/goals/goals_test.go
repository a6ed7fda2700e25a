package goals

import "testing"

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
		{Input{SiteID: "s", Name: "x", Type: "pageview", PagePath: "/app#/a#b"}, "page_path"},
		{Input{SiteID: "s", Name: "x", Type: "pageview", PagePath: "#/settings"}, "page_path"},
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
	// a hash route's page, as exclusions name it
	for _, p := range []string{"/app#/settings", "/app#/admin/**", "/#/checkout/*", "/app#"} {
		if _, err := validate(Input{SiteID: "s", Name: "x", Type: "pageview", PagePath: p}); err != nil {
			t.Errorf("%s: %v, want a valid goal", p, err)
		}
	}
}
