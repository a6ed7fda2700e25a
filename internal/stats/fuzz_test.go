package stats

import (
	"errors"
	"net/url"
	"testing"

	"github.com/tally-analytics/tally/internal/errs"
)

// FuzzParseRequest feeds arbitrary query strings to the stats parameter
// parser for every kind of endpoint: no panic, every rejection a 400 or 404
// naming a field, and every accepted request within the rules.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		"site_id=s&date_from=2026-05-01&date_to=2026-05-07",
		"site_id=s&date_from=2026-05-01&date_to=2026-05-07&timezone=Asia/Tokyo&compare=true&limit=10&page=2",
		"site_id=s&date_from=2026-05-07&date_to=2026-05-01",
		"site_id=s&date_from=2026-02-30&date_to=2026-05-01&utm_source=&device=TV",
		"site_id=s&date_from=2020-01-01&date_to=2026-01-01&country=usa&region=x&breakdown=planet&model=z",
		"site_id=s&date_from=2026-05-01&date_to=2026-05-07&source=Google&pathname=/pricing&city=Berlin&browser=Firefox&os=Linux&device=mobile",
		"site_id=%00&date_from=0001-01-01&date_to=9999-12-31&limit=-1&page=99999999999999999999",
	} {
		f.Add(seed)
	}
	endpoints := []Endpoint{{}, {AcceptCompare: true}, {AcceptPaging: true}, {Require: "country"},
		{Require: "region"}, {Require: "browser"}, {Require: "os"}, {AcceptEventName: true}, {Revenue: true}, {NoDates: true}}
	f.Fuzz(func(t *testing.T, query string) {
		v, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		for _, e := range endpoints {
			r, err := ParseRequest(v, e)
			if err != nil {
				var ee *errs.Error
				if !errors.As(err, &ee) || (ee.Kind != errs.Invalid && ee.Kind != errs.NotFound) || ee.Field == "" {
					t.Fatalf("%+v: rejection %v is not a 400/404 naming a field", e, err)
				}
				continue
			}
			if r.SiteID == "" {
				t.Fatal("accepted without site_id")
			}
			if e.NoDates {
				continue
			}
			if !r.DateFrom.Before(r.DateTo) || r.DateTo.After(r.DateFrom.AddDate(MaxRangeYears, 0, 0)) {
				t.Fatalf("accepted range %v..%v", r.DateFrom, r.DateTo)
			}
			if e.AcceptPaging && (r.Limit < 1 || r.Limit > MaxLimit || r.Page < 1 || r.Page > MaxPage) {
				t.Fatalf("accepted limit %d page %d", r.Limit, r.Page)
			}
			if r.Timezone != "" {
				if _, err := LoadLocation(r.Timezone); err != nil {
					t.Fatalf("accepted time zone %q", r.Timezone)
				}
			}
			if _, ok := attributionPrefix[r.Attribution]; e.Revenue && !ok {
				t.Fatalf("accepted attribution %q", r.Attribution)
			}
		}
	})
}
