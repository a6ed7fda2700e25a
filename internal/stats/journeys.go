package stats

import (
	"cmp"
	"context"
	"net/url"
	"strconv"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
)

// The journeys report's path lengths.
const (
	MinJourneySteps     = 2
	MaxJourneySteps     = 6
	DefaultJourneySteps = 3
)

// parseJourney reads the journeys report's steps, start and end; the
// report checks them (CheckJourney), for the dashboard's card as for the
// API.
func parseJourney(r *Request, v url.Values) error {
	r.Steps, r.StartPage, r.EndPage = JourneySteps(v), v.Get("start"), v.Get("end")
	return CheckJourney(r.Steps, r.StartPage, r.EndPage, v.Has("start"), v.Has("end"))
}

// JourneySteps reads the steps parameter of a query string:
// DefaultJourneySteps without one, -1 (which CheckJourney refuses) for one
// that is no number.
func JourneySteps(v url.Values) int {
	s, ok := v["steps"]
	if !ok {
		return DefaultJourneySteps
	}
	n, err := strconv.Atoi(s[0])
	if err != nil {
		return -1
	}
	return n
}

// CheckJourney checks a journeys report's path length and its start and
// end pages (given says whether each was given at all: an empty page is
// refused, not read as none). A page is one the pages report lists: a
// path from /, compared whole, as the pathname filter takes it.
func CheckJourney(steps int, start, end string, startGiven, endGiven bool) error {
	if steps < MinJourneySteps || steps > MaxJourneySteps {
		return errs.InvalidField("steps", "must be an integer from %d to %d", MinJourneySteps, MaxJourneySteps)
	}
	if _, ok := pagePath(start); startGiven && !ok {
		return errs.InvalidField("start", "must be a page path starting with / (at most 1024 bytes)")
	}
	if _, ok := pagePath(end); endGiven && !ok {
		return errs.InvalidField("end", "must be a page path starting with / (at most 1024 bytes)")
	}
	return nil
}

// Journeys lists the paths sessions took through the site, the most
// common first (see JourneyQuery for what a path is). It reads raw
// pageviews, which no rollup holds, on a sample of visitors from the
// threshold of groupSampleRate on. Filters select sessions as they
// do for the other reports; a page (or host) filter selects the sessions
// that viewed the page (had an event on the host): its paths are the
// sessions' whole paths, not that page's or host's alone.
//
// r.Steps is checked as it is (JourneySteps gives DefaultJourneySteps to a
// query string without steps): a 0 is refused as the API refuses it.
func (s *Service) Journeys(ctx context.Context, p auth.Principal, r Request) (Journeys, error) {
	r.Limit = cmp.Or(r.Limit, DefaultLimit)
	res := Journeys{Steps: r.Steps, Start: r.StartPage, End: r.EndPage}
	if err := CheckJourney(r.Steps, r.StartPage, r.EndPage, r.StartPage != "", r.EndPage != ""); err != nil {
		return res, err
	}
	sc, err := s.access(ctx, p, r)
	if err == nil {
		sc.sample, err = s.groupSampleRate(ctx, sc)
	}
	if err != nil {
		return res, err
	}
	q := JourneyQuery{Site: sc.site.ID, From: sc.from, To: sc.to, Steps: r.Steps, Start: r.StartPage, End: r.EndPage,
		Filters: sc.req.Filters, SamplePercent: sc.sample, Limit: r.Limit}
	sql, args, err := q.Build()
	if err != nil {
		return res, err
	}
	var pages, totalPages []string
	var sessions, visitors, totalSessions, totalVisitors uint64
	err = s.store.Each(ctx, sql, args, []any{&pages, &sessions, &visitors}, func() {
		res.Rows = append(res.Rows, JourneyRow{Pages: append([]string(nil), pages...), Sessions: int64(sessions), Visitors: int64(visitors)})
	}, &totalPages, &totalSessions, &totalVisitors)
	if err != nil {
		return res, queryError(err)
	}
	scale := 1.0
	if sc.sample > 0 && sc.sample < 100 {
		scale = 100 / float64(sc.sample)
	}
	res.Sessions, res.Visitors = count(float64(totalSessions)*scale), count(float64(totalVisitors)*scale)
	for i, row := range res.Rows {
		n := float64(row.Sessions)
		res.Rows[i].Sessions, res.Rows[i].Visitors = count(n*scale), count(float64(row.Visitors)*scale)
		res.Rows[i].Percentage = percent(n, float64(totalSessions))
	}
	res.Meta = sc.meta()
	return res, nil
}
