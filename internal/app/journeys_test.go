package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// journeyEvent is one event of the journeys dataset, at a UTC time of June
// 10, 2026 (the harness's site is in UTC).
type journeyEvent struct {
	at      string // "15:04"
	visitor string
	path    string
	event   string // a custom event's name; "" for a pageview
	bot     bool   // sent with Googlebot's user agent
}

// The sessions of the journeys dataset (30 minutes without an event end a
// session), each path with its runs of one page made one step:
//
//	A1 10:00 /, 10:01 /pricing, 10:02 /pricing (a reload), 10:03 /signup, 10:04 /done
//	                                                  → / /pricing /signup /done
//	A2 14:00 /, 14:01 /pricing, 14:02 /signup         → / /pricing /signup (A again, 4 h later)
//	B  10:00 /, 10:01 /pricing, 10:02 /signup          → / /pricing /signup
//	C  10:00 /, 10:01 /pricing, 10:02 /docs            → / /pricing /docs
//	H  11:00 /, 11:01 Click on / (a custom event), 11:02 /pricing, 11:03 /docs
//	                                                  → / /pricing /docs (the event takes no step)
//	D1 10:00 /, 10:01 /about; D2 15:00 /, 15:01 /about → / /about twice (shorter than 3 steps)
//	E  10:00 /                                         → one page: a bounce, no journey
//	F  10:00 /pricing, 10:01 /signup, 10:02 /pricing, 10:03 /done
//	                                                  → /pricing /signup /pricing /done
//	I  10:00 /blog, 10:01 /pricing                     → /blog /pricing
//	G  10:00 /, 10:01 /pricing, 10:02 /signup as Googlebot: a bot, never counted
var journeyDataset = []journeyEvent{
	{"10:00", "A", "/", "", false}, {"10:00", "B", "/", "", false}, {"10:00", "C", "/", "", false},
	{"10:00", "D", "/", "", false}, {"10:00", "E", "/", "", false}, {"10:00", "F", "/pricing", "", false},
	{"10:00", "I", "/blog", "", false}, {"10:00", "G", "/", "", true},
	{"10:01", "A", "/pricing", "", false}, {"10:01", "B", "/pricing", "", false}, {"10:01", "C", "/pricing", "", false},
	{"10:01", "D", "/about", "", false}, {"10:01", "F", "/signup", "", false}, {"10:01", "I", "/pricing", "", false},
	{"10:01", "G", "/pricing", "", true},
	{"10:02", "A", "/pricing", "", false}, {"10:02", "B", "/signup", "", false}, {"10:02", "C", "/docs", "", false},
	{"10:02", "F", "/pricing", "", false}, {"10:02", "G", "/signup", "", true},
	{"10:03", "A", "/signup", "", false}, {"10:03", "F", "/done", "", false},
	{"10:04", "A", "/done", "", false},
	{"11:00", "H", "/", "", false}, {"11:01", "H", "/", "Click", false}, {"11:02", "H", "/pricing", "", false},
	{"11:03", "H", "/docs", "", false},
	{"14:00", "A", "/", "", false}, {"14:01", "A", "/pricing", "", false}, {"14:02", "A", "/signup", "", false},
	{"15:00", "D", "/", "", false}, {"15:01", "D", "/about", "", false},
}

// loadJourneyDataset sends the dataset through the Events API, each event
// at its time.
func loadJourneyDataset(t *testing.T, h *harness) {
	t.Helper()
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	events, bots := 0, 0
	for _, e := range journeyDataset {
		at, err := time.Parse(time.DateTime, "2026-06-10 "+e.at+":00")
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(at)
		req := api.PageviewRequest{SiteID: site, URL: "https://example.com" + e.path, VisitorID: e.visitor}
		if e.bot {
			req.UserAgent = googlebotUA
			bots++
		} else {
			events++
		}
		if e.event != "" {
			_, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: e.event})
		} else {
			_, err = c.Pageview(ctx, req)
		}
		if err != nil {
			t.Fatalf("%s %s %s: %v", e.at, e.visitor, e.path, err)
		}
	}
	h.waitCount(int64(events), "SELECT count() FROM events WHERE site_id = ?", site)
	h.waitCount(int64(bots), "SELECT count() FROM bot_events WHERE site_id = ?", site)
}

func TestJourneysReport(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	loadJourneyDataset(t, h)

	path := func(pages ...string) []string { return pages }
	row := func(pages []string, sessions, visitors int64, pct float64) api.Journey {
		return api.Journey{Pages: pages, Sessions: sessions, Visitors: visitors, Percentage: pct}
	}
	check := func(name string, p client.StatsParams, sessions, visitors int64, want ...api.Journey) {
		t.Helper()
		p.SiteID, p.DateFrom, p.DateTo = site, "2026-06-10", "2026-06-11"
		res, err := c.Journeys(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want == nil {
			want = []api.Journey{}
		}
		if diff := cmp.Diff(api.Journeys{Journeys: want, Sessions: sessions, Visitors: visitors}, res.Data); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		steps := p.Steps
		if steps == 0 {
			steps = 3
		}
		wantMeta := api.JourneysMeta{StatsMeta: api.StatsMeta{SiteID: site, DateFrom: p.DateFrom, DateTo: p.DateTo, Timezone: "UTC"},
			Steps: steps, Start: p.Start, End: p.End}
		if res.Meta != wantMeta {
			t.Errorf("%s: meta %+v, want %+v", name, res.Meta, wantMeta)
		}
	}

	// 3 steps from the entry page: 9 sessions have two pages or more (A1
	// A2 B C H D1 D2 F I; E bounced, G is a bot), of 7 visitors (A B C H D F
	// I). / /pricing /signup: A1 (its reload is one step), A2, B = 3 of 9
	// (33.3 %), 2 visitors; / /pricing /docs: C, H = 2 (22.2 %), 2 visitors;
	// / /about: D1, D2 = 2, 1 visitor, after the path with 2 visitors; then
	// one session each (11.1 %) in the order of their pages: /blog before
	// /pricing. G's / /pricing /signup would have made the first 4.
	check("3 steps", client.StatsParams{}, 9, 7,
		row(path("/", "/pricing", "/signup"), 3, 2, 33.3),
		row(path("/", "/pricing", "/docs"), 2, 2, 22.2),
		row(path("/", "/about"), 2, 1, 22.2),
		row(path("/blog", "/pricing"), 1, 1, 11.1),
		row(path("/pricing", "/signup", "/pricing"), 1, 1, 11.1))

	// 4 steps: A1 goes on to /done (1 of 9) and leaves A2 and B on
	// / /pricing /signup (2, 2 visitors), which follows / /pricing /docs
	// (2, 2) by its pages; F reaches /done. The sessions are those of 3
	// steps. limit=4 cuts the list, not the totals.
	check("4 steps", client.StatsParams{Steps: 4, Limit: 4}, 9, 7,
		row(path("/", "/pricing", "/docs"), 2, 2, 22.2),
		row(path("/", "/pricing", "/signup"), 2, 2, 22.2),
		row(path("/", "/about"), 2, 1, 22.2),
		row(path("/", "/pricing", "/signup", "/done"), 1, 1, 11.1))

	// from /pricing, 3 steps: A1 /pricing /signup /done; A2, B /pricing
	// /signup; C, H /pricing /docs; F /pricing /signup /pricing (its first
	// /pricing). I left at /pricing (one page); D and E never saw it. So 6
	// sessions of 5 visitors (A B C H F): 2, 2, 1, 1 of 6.
	check("from /pricing", client.StatsParams{Start: "/pricing"}, 6, 5,
		row(path("/pricing", "/docs"), 2, 2, 33.3),
		row(path("/pricing", "/signup"), 2, 2, 33.3),
		row(path("/pricing", "/signup", "/done"), 1, 1, 16.7),
		row(path("/pricing", "/signup", "/pricing"), 1, 1, 16.7))

	// up to /signup, 3 steps: A1, A2, B / /pricing /signup (3 of 4, 75 %),
	// F /pricing /signup (25 %); 4 sessions of A B F.
	check("to /signup", client.StatsParams{End: "/signup"}, 4, 3,
		row(path("/", "/pricing", "/signup"), 3, 2, 75),
		row(path("/pricing", "/signup"), 1, 1, 25))
	// 2 steps: the page before /signup, /pricing for all four
	check("to /signup, 2 steps", client.StatsParams{End: "/signup", Steps: 2}, 4, 3,
		row(path("/pricing", "/signup"), 4, 3, 100))

	// from /pricing to /done: A1 in 3 pages; F's takes 4 (/pricing /signup
	// /pricing /done), so it counts from 4 steps on
	check("/pricing to /done", client.StatsParams{Start: "/pricing", End: "/done"}, 1, 1,
		row(path("/pricing", "/signup", "/done"), 1, 1, 100))
	check("/pricing to /done, 4 steps", client.StatsParams{Start: "/pricing", End: "/done", Steps: 4}, 2, 2,
		row(path("/pricing", "/signup", "/done"), 1, 1, 50),
		row(path("/pricing", "/signup", "/pricing", "/done"), 1, 1, 50))
	// back to /pricing: F came back after /signup; A1's reload is no return
	check("/pricing and back", client.StatsParams{Start: "/pricing", End: "/pricing"}, 1, 1,
		row(path("/pricing", "/signup", "/pricing"), 1, 1, 100))
	// a page nobody saw: no journeys
	check("from /nowhere", client.StatsParams{Start: "/nowhere"}, 0, 0)

	// filtered by a page: the sessions that viewed /about (D1, D2), whole
	check("sessions with /about", client.StatsParams{Pathname: "/about"}, 2, 1,
		row(path("/", "/about"), 2, 1, 100))
	// by an attribute of the visit: none came from Google
	check("from Google", client.StatsParams{Source: "Google"}, 0, 0)

	// CSV: a row a path, its pages joined by arrows
	_, body := apiGet(t, h, reportPath("journeys"), url.Values{"site_id": {site}, "date_from": {"2026-06-10"},
		"date_to": {"2026-06-11"}, "end": {"/signup"}, "format": {"csv"}}, "")
	if want := "path,sessions,visitors,percentage\r\n/ → /pricing → /signup,3,2,75\r\n/pricing → /signup,1,1,25\r\n"; string(body) != want {
		t.Errorf("journeys CSV %q, want %q", body, want)
	}
}

func TestJourneysParameters(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	base := url.Values{"site_id": {site}, "date_from": {"2026-06-10"}, "date_to": {"2026-06-11"}}
	for _, tc := range []struct{ param, value, field string }{
		{"steps", "1", "steps"}, {"steps", "7", "steps"}, {"steps", "three", "steps"}, {"steps", "", "steps"},
		{"steps", "0", "steps"}, {"start", "pricing", "start"}, {"start", "", "start"}, {"end", "x", "end"},
		{"end", "", "end"}, {"limit", "0", "limit"}, {"limit", "1001", "limit"}, {"pathname", "about", "pathname"},
	} {
		q := url.Values{}
		for k, v := range base {
			q[k] = v
		}
		q.Set(tc.param, tc.value)
		status, e := get(t, h, h.key, "/api/v1/stats/journeys", q)
		if status != http.StatusBadRequest || e.Error.Code != "invalid_request" || e.Error.Field != tc.field {
			t.Errorf("%s=%q: %d %+v, want 400 invalid_request on %s", tc.param, tc.value, status, e.Error, tc.field)
		}
	}
	q := url.Values{"start": {"/a", "/b"}}
	for k, v := range base {
		q[k] = v
	}
	if status, e := get(t, h, h.key, "/api/v1/stats/journeys", q); status != http.StatusBadRequest || e.Error.Field != "start" {
		t.Errorf("start twice: %d %+v, want 400 on start", status, e.Error)
	}
	if status, _ := get(t, h, h.key, "/api/v1/stats/journeys", base); status != http.StatusOK {
		t.Errorf("the defaults: %d, want 200", status)
	}
}

// The dashboard's card shows the API's paths, each page a link filtering
// the dashboard by it, with tabs for the length and a form for the pages.
func TestDashboardJourneys(t *testing.T) {
	h := newHarness(t)
	loadJourneyDataset(t, h)
	h.clock.Set(time.Now().UTC()) // a login needs the clock near Postgres's
	site := "/sites/" + string(h.siteID)
	w := newWebUser(t, h)
	w.login(h.email)
	view := "?range=custom&from=2026-06-10&to=2026-06-11"

	if body := w.expect(http.MethodGet, site+view, nil, http.StatusOK); !strings.Contains(body, `id="card-journeys"`) {
		t.Errorf("the dashboard has no journeys card")
	}
	// 3 steps, as TestJourneysReport works them out: 9 sessions of 7 visitors
	body := w.expect(http.MethodGet, site+"/cards/journeys"+view, nil, http.StatusOK)
	for _, want := range []string{
		`data-metric="journey_sessions" data-value="9"`,
		`<tr data-row="/ → /pricing → /signup">`,
		`data-col="sessions" data-value="3"`, `data-col="visitors" data-value="2"`, `data-col="percentage" data-value="33.3"`,
		`<a href="` + site + `?from=2026-06-10&amp;pathname=%2Fsignup&amp;range=custom&amp;to=2026-06-11" title="Filter the dashboard by /signup">/signup</a>`,
		`<a href="` + site + `/cards/journeys?from=2026-06-10&amp;range=custom&amp;steps=4&amp;to=2026-06-11" data-tab>4 steps</a>`,
		`<input type="hidden" name="range" value="custom">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the card lacks %s:\n%s", want, body)
		}
	}
	if n := strings.Count(body, "<tr data-row="); n != 5 {
		t.Errorf("the card has %d paths, want 5", n)
	}
	// from /pricing to /done in 4 steps: A1's and F's
	body = w.expect(http.MethodGet, site+"/cards/journeys"+view+"&steps=4&start=%2Fpricing&end=%2Fdone", nil, http.StatusOK)
	for _, want := range []string{`data-metric="journey_sessions" data-value="2"`, `<tr data-row="/pricing → /signup → /done">`,
		`<tr data-row="/pricing → /signup → /pricing → /done">`, `value="/pricing"`, `value="/done"`, `>Any page</a>`,
		`aria-current="true" class="active">4 steps</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the card from /pricing to /done lacks %s:\n%s", want, body)
		}
	}
	// pages typed with spaces around them are those pages: the same card
	spaced := w.expect(http.MethodGet, site+"/cards/journeys"+view+"&steps=4&start=+%2Fpricing+&end=%2Fdone%20", nil, http.StatusOK)
	if !strings.Contains(spaced, `data-metric="journey_sessions" data-value="2"`) || !strings.Contains(spaced, `value="/pricing"`) ||
		strings.Contains(spaced, `aria-invalid="true"`) {
		t.Errorf("the card from \" /pricing \" to \"/done \":\n%s", spaced)
	}
	// a page without its slash is the form again, with the field marked
	body = w.expect(http.MethodGet, site+"/cards/journeys"+view+"&start=pricing", nil, http.StatusOK)
	if !strings.Contains(body, `id="journey-start" name="start" value="pricing"`) || !strings.Contains(body, `aria-invalid="true"`) ||
		!strings.Contains(body, `role="alert">From page: must be a page path starting with /`) {
		t.Errorf("the card with a bad page:\n%s", body)
	}
	// a path length the API refuses (steps=0 is a 400 there) the card
	// refuses too, rather than showing paths of 3 pages under no tab
	body = w.expect(http.MethodGet, site+"/cards/journeys"+view+"&steps=0", nil, http.StatusOK)
	if !strings.Contains(body, `role="alert">Steps: must be an integer from 2 to 6`) || strings.Contains(body, "<tr data-row=") {
		t.Errorf("the card with steps=0:\n%s", body)
	}
}
