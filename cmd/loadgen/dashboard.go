package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// dashboardResult is the latency of one dashboard request over one range:
// the page, one of its cards, or all cards fetched as the page's script does.
type dashboardResult struct {
	What, Range string
	P50, P95    time.Duration
	// Cards is how many cards were loaded together (0: one request).
	Cards int
}

// cardsAtOnce is how many cards the dashboard page's script loads at a time.
const cardsAtOnce = 3

// laterCards are the cards the dashboard gained after its first nine, the
// statistics' (funnels read raw events, tracking health its own rollup):
// the target for the cards together was set on those nine, so the report
// times them together as well as the page's whole set.
var laterCards = []string{"funnels", "health"}

var (
	csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	cardURL   = regexp.MustCompile(`data-card="([^"]+)"( data-first)?`)
)

// dashboardLatencies logs in to the dashboard as the bench account and times
// a site's dashboard page and each of its cards runs times (after a warm-up),
// one request at a time, then all the cards as the page's script loads them
// (cardsAtOnce at a time) runs times, and the same for all but laterCards.
func dashboardLatencies(ctx context.Context, base, site string, runs int, progress func(string)) ([]dashboardResult, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Jar: jar, Timeout: time.Minute}
	get := func(path string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return "", err
		}
		res, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			return "", err
		}
		if res.StatusCode != http.StatusOK {
			return "", fmt.Errorf("GET %s: %s", path, res.Status)
		}
		return string(body), nil
	}
	form, err := get("/login")
	if err != nil {
		return nil, err
	}
	m := csrfInput.FindStringSubmatch(form)
	if m == nil {
		return nil, fmt.Errorf("no CSRF token on the login page")
	}
	res, err := c.PostForm(base+"/login", url.Values{"email": {benchEmail}, "password": {benchPassword}, "csrf": {m[1]}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	if res.Request.URL.Path != "/sites" {
		return nil, fmt.Errorf("logging in to the dashboard ended on %s (%s)", res.Request.URL.Path, res.Status)
	}

	timed := func(what, rng string, n int, call func() error) (dashboardResult, error) {
		if err := call(); err != nil { // warm-up
			return dashboardResult{}, fmt.Errorf("%s: %w", what, err)
		}
		took := make([]time.Duration, n)
		for i := range took {
			start := time.Now()
			if err := call(); err != nil {
				return dashboardResult{}, fmt.Errorf("%s: %w", what, err)
			}
			took[i] = time.Since(start)
		}
		slices.Sort(took)
		r := loadResult{Latencies: took}
		return dashboardResult{What: what, Range: rng, P50: r.percentile(50), P95: r.percentile(95)}, nil
	}
	var out []dashboardResult
	for _, rng := range []string{"7d", "30d"} {
		page := "/sites/" + site + "?range=" + rng
		progress("page and cards, " + rng)
		body, err := get(page)
		if err != nil {
			return nil, err
		}
		// cards in page order; started the order the page's script starts
		// them: those marked data-first, then the rest in page order
		var cards, first, rest []string
		for _, m := range cardURL.FindAllStringSubmatch(body, -1) {
			card := html.UnescapeString(m[1])
			cards = append(cards, card)
			if m[2] != "" {
				first = append(first, card)
			} else {
				rest = append(rest, card)
			}
		}
		started := append(first, rest...)
		if len(cards) == 0 {
			return nil, fmt.Errorf("the dashboard page lists no cards")
		}
		r, err := timed("page", rng, runs, func() error { _, err := get(page); return err })
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		for _, card := range cards {
			u, err := url.Parse(card)
			if err != nil {
				return nil, err
			}
			r, err := timed("card: "+path.Base(u.Path), rng, runs, func() error { _, err := get(card); return err })
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		together := func(what string, cards []string) error {
			r, err := timed(what, rng, max(1, runs/2), func() error {
				var wg sync.WaitGroup
				errs := make([]error, len(cards))
				slots := make(chan struct{}, cardsAtOnce)
				for i, card := range cards {
					wg.Add(1)
					slots <- struct{}{}
					go func() { defer wg.Done(); _, errs[i] = get(card); <-slots }()
				}
				wg.Wait()
				return errors.Join(errs...)
			})
			r.Cards = len(cards)
			out = append(out, r)
			return err
		}
		if err := together(fmt.Sprintf("all %d cards, %d at a time as the page loads them", len(cards), cardsAtOnce), started); err != nil {
			return nil, err
		}
		first9 := slices.DeleteFunc(slices.Clone(started), func(card string) bool {
			u, err := url.Parse(card)
			return err == nil && slices.Contains(laterCards, path.Base(u.Path))
		})
		if len(first9) < len(started) {
			what := fmt.Sprintf("the %d cards but %s, the same way", len(first9), strings.Join(laterCards, " and "))
			if err := together(what, first9); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
