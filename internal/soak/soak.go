// Package soak drives traffic at a running tally and counts, event by
// event, what became of it in ClickHouse: the measuring stick of the fault
// tests and of the fault soak (go tool task faults). Every event carries a
// path of its own, so each can be looked for; the ledger remembers what
// the sender was told about it.
package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Ledger is what the senders were told about each event, by path, and
// about the events that do not land in the events table by id: bots (in
// bot_events) and the revenue of custom events (in the payments ledger).
type Ledger struct {
	mu sync.Mutex
	answers
	// scrolls are the answers to the scroll depths reported (engagements,
	// by the path of their page: one each)
	scrolls answers
	// bots and revenue are the ids of accepted bot events and revenue
	// events; cutRevenue counts revenue events sent without an answer
	bots, revenue []string
	cutRevenue    int
}

// answers are the paths of what was sent, by the answer it got.
type answers struct {
	acked   []string // accepted (201, 202, or success in a batch): stored exactly once
	refused []string // refused for now (503, or service_unavailable in a batch): never stored
	cut     []string // no answer (the server went away): stored once or not at all
	other   []string // any other answer: a failure of the run
}

// clone copies the lists (the ledger's lock held).
func (a *answers) clone() answers {
	return answers{slices.Clone(a.acked), slices.Clone(a.refused), slices.Clone(a.cut), slices.Clone(a.other)}
}

func (l *Ledger) add(list *[]string, paths ...string) {
	l.mu.Lock()
	*list = append(*list, paths...)
	l.mu.Unlock()
}

// Acked counts the events accepted so far.
func (l *Ledger) Acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// Refused counts the events refused so far.
func (l *Ledger) Refused() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.refused)
}

// record files the answer err to the events of paths.
func (l *Ledger) record(err error, paths ...string) { l.file(&l.answers, err, paths...) }

// file files the answer err to paths in to.
func (l *Ledger) file(to *answers, err error, paths ...string) {
	var apiErr *client.Error
	switch {
	case err == nil:
		l.add(&to.acked, paths...)
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusServiceUnavailable:
		l.add(&to.refused, paths...)
	case errors.As(err, &apiErr):
		l.add(&to.other, paths...)
	default:
		l.add(&to.cut, paths...)
	}
}

// Sender sends the events of one site. Its methods are safe for concurrent
// use.
type Sender struct {
	Client  *client.Client // with an events:write key
	BaseURL string         // of the server, for the tracker's /e
	HTTP    *http.Client
	Site    string
	Domain  string // the site's domain: tracker events must come from its pages
	Prefix  string // starts every path of this sender ("/run3")
	Ledger  *Ledger
	seq     atomic.Int64
}

func (s *Sender) path() string { return fmt.Sprintf("%s/%d", s.Prefix, s.seq.Add(1)) }

func (s *Sender) url(path string) string { return "https://" + s.Domain + path }

// ua is a browser's user agent: bots are counted apart, not stored as events.
const ua = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"

// Pageview sends a pageview through the Events API.
func (s *Sender) Pageview(ctx context.Context, visitor string) error {
	p := s.path()
	_, err := s.Client.Pageview(ctx, api.PageviewRequest{SiteID: s.Site, URL: s.url(p), VisitorID: visitor, UserAgent: ua})
	s.Ledger.record(err, p)
	return err
}

// Custom sends a custom event through the Events API; with revenue, it
// carries 9.90 USD, which the payments ledger must record once.
func (s *Sender) Custom(ctx context.Context, visitor string, revenue bool) error {
	p := s.path()
	req := api.CustomEventRequest{PageviewRequest: api.PageviewRequest{SiteID: s.Site, URL: s.url(p), VisitorID: visitor,
		UserAgent: ua}, EventName: "Signup", Props: map[string]any{"plan": "pro"}}
	if revenue {
		req.EventName, req.Revenue = "Purchase", &api.Revenue{Amount: "9.90", Currency: "USD"}
	}
	res, err := s.Client.CustomEvent(ctx, req)
	s.Ledger.record(err, p)
	if revenue {
		s.Ledger.mu.Lock()
		if err == nil {
			s.Ledger.revenue = append(s.Ledger.revenue, res.EventID)
		} else if !errors.As(err, new(*client.Error)) {
			s.Ledger.cutRevenue++
		}
		s.Ledger.mu.Unlock()
	}
	return err
}

// Bot sends a crawler's pageview: accepted, counted in bot_events (by its
// id: those rows have no path), never an event.
func (s *Sender) Bot(ctx context.Context) error {
	res, err := s.Client.Pageview(ctx, api.PageviewRequest{SiteID: s.Site, URL: s.url(s.path()),
		UserAgent: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"})
	var apiErr *client.Error
	if err != nil && errors.As(err, &apiErr) && apiErr.Status != http.StatusServiceUnavailable {
		s.Ledger.add(&s.Ledger.other, "bot")
	}
	if err == nil {
		s.Ledger.add(&s.Ledger.bots, res.EventID)
	}
	return err
}

// Tracker sends a pageview as the tracking script does (POST /e), and once
// it is accepted the page's scroll depth, as the script does when the page
// is left (filed under the page's path, among the scroll depths).
func (s *Sender) Tracker(ctx context.Context, visitor string) error {
	p := s.path()
	err := s.postE(ctx, api.TrackerEvent{SiteID: s.Site, EventName: "pageview", URL: s.url(p), VisitorID: visitor})
	s.Ledger.record(err, p)
	if err != nil {
		return err
	}
	err = s.postE(ctx, api.TrackerEvent{SiteID: s.Site, EventName: "engagement", URL: s.url(p), VisitorID: visitor,
		ScrollDepth: api.Number(fmt.Sprint(1 + s.seq.Load()%100))})
	s.Ledger.file(&s.Ledger.scrolls, err, p)
	return err
}

// postE sends ev to /e as the tracking script does; an answer but 202 is a
// *client.Error.
func (s *Sender) postE(ctx context.Context, ev api.TrackerEvent) error {
	body, _ := json.Marshal(ev)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL+"/e", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
	res, err := s.HTTP.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		return &client.Error{Status: res.StatusCode}
	}
	return nil
}

// Batch sends n events (pageviews and custom events of visitors vb0..vb99)
// in one batch request.
func (s *Sender) Batch(ctx context.Context, n int) error {
	events := make([]api.CustomEventRequest, n)
	paths := make([]string, n)
	for i := range events {
		paths[i] = s.path()
		events[i].PageviewRequest = api.PageviewRequest{SiteID: s.Site, URL: s.url(paths[i]), VisitorID: fmt.Sprint("vb", i%100), UserAgent: ua}
		if i%4 == 3 {
			events[i].EventName = "Download"
		}
	}
	res, err := s.Client.Batch(ctx, events)
	if err != nil {
		s.Ledger.record(err, paths...)
		return err
	}
	for i, r := range res.Results {
		switch {
		case r.Success:
			s.Ledger.add(&s.Ledger.acked, paths[i])
		case r.Error != nil && r.Error.Code == "service_unavailable":
			s.Ledger.add(&s.Ledger.refused, paths[i])
		default:
			s.Ledger.add(&s.Ledger.other, paths[i])
		}
	}
	return nil
}

// Run sends mixed traffic until ctx ends: workers-1 senders of single
// events (pageviews, custom events — one in five with revenue —, tracker
// pageviews and, one in eight, a crawler's pageview, from visitors
// v0..v{visitors-1}) and one sender of batches of 1,000. A sender that gets
// no answer pauses briefly (the server is away).
func (s *Sender) Run(ctx context.Context, workers, visitors int) *sync.WaitGroup {
	var wg sync.WaitGroup
	pause := func(err error) {
		if err != nil && !errors.As(err, new(*client.Error)) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	for w := range workers - 1 {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i += workers - 1 {
				visitor := fmt.Sprint("v", i%visitors)
				switch {
				case i%8 == 7:
					pause(s.Bot(ctx))
				case i%3 == 0:
					pause(s.Pageview(ctx, visitor))
				case i%3 == 1:
					pause(s.Custom(ctx, visitor, i%5 == 1))
				default:
					pause(s.Tracker(ctx, visitor))
				}
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			pause(s.Batch(ctx, 1000))
		}
	})
	return &wg
}

// For sends mixed traffic for d.
func (s *Sender) For(d time.Duration, workers, visitors int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	s.Run(ctx, workers, visitors).Wait()
}
