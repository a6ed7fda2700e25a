package web

import (
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/stats"
)

// noResets is the Passwords of a server that sends no reset links: the
// login page asks nothing else of it.
type noResets struct{ Passwords }

func (noResets) Resets() bool { return false }

// themeServer is a dashboard without stores: enough for the login page,
// the theme form and the error page.
func themeServer(t *testing.T) http.Handler {
	t.Helper()
	s, err := New(Deps{Passwords: noResets{}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s.Handler()
}

func serve(h http.Handler, r *http.Request) *http.Response {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var pressed = regexp.MustCompile(`name="theme" value="(\w+)" aria-pressed="true"`)

// A page is written in the colours its browser chose, from the first
// byte: the root's data-theme, the color-scheme the browser paints before
// the style sheet, and the pressed button of the theme form; a cookie of
// no known value is no choice.
func TestThemeIsWrittenIntoThePage(t *testing.T) {
	srv := themeServer(t)
	for _, c := range []struct {
		cookie, root, scheme, pressed string
	}{
		{"", `<html lang="en">`, "light dark", "system"},
		{"dark", `<html lang="en" data-theme="dark">`, "dark", "dark"},
		{"light", `<html lang="en" data-theme="light">`, "light", "light"},
		{"purple", `<html lang="en">`, "light dark", "system"},
	} {
		t.Run("cookie "+c.cookie, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/login?next=/sites", nil)
			if c.cookie != "" {
				r.AddCookie(&http.Cookie{Name: themeCookie, Value: c.cookie})
			}
			res := serve(srv, r)
			page := body(t, res)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET /login: %d\n%s", res.StatusCode, page)
			}
			if !strings.Contains(page, c.root) || !strings.Contains(page, `<meta name="color-scheme" content="`+c.scheme+`">`) {
				t.Errorf("want %s and color-scheme %q in\n%.600s", c.root, c.scheme, page)
			}
			got := pressed.FindAllStringSubmatch(page, -1)
			if len(got) != 1 || got[0][1] != c.pressed {
				t.Errorf("pressed buttons %q, want %s only", got, c.pressed)
			}
			if !strings.Contains(page, `<input type="hidden" name="back" value="/login?next=/sites">`) {
				t.Errorf("the theme form does not go back to the page itself")
			}
		})
	}
}

// A page that answers a form goes back to the page that sent it, when that
// is of this site; no other.
func TestThemeBackOfAFormAnswer(t *testing.T) {
	srv := themeServer(t)
	back := regexp.MustCompile(`name="back" value="([^"]*)"`)
	for referer, want := range map[string]string{
		"http://example.com/login?next=%2Fsites": "/login?next=%2Fsites",
		"http://elsewhere.example/login":         "",
		"":                                       "",
	} {
		// no CSRF token: the login form again, 403
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("email=a%40b.example&password=x"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if referer != "" {
			r.Header.Set("Referer", referer)
		}
		res := serve(srv, r)
		page := body(t, res)
		m := back.FindStringSubmatch(page)
		if res.StatusCode != http.StatusForbidden || m == nil || html.UnescapeString(m[1]) != want {
			t.Errorf("a login refused, from %q: %d, back %q; want 403, back %q", referer, res.StatusCode, m, want)
		}
	}
}

// An error page repeats nothing of its request: its theme form goes home,
// and the same error at two addresses is the same page.
func TestThemeBackOfAnErrorPage(t *testing.T) {
	srv := themeServer(t)
	var pages []string
	for _, path := range []string{"/share/abc/nowhere?x=1", "/share/def/nowhere"} {
		res := serve(srv, httptest.NewRequest(http.MethodGet, path, nil))
		page := body(t, res)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(page, `<input type="hidden" name="back" value="">`) {
			t.Errorf("GET %s: %d, want 404 with a theme form going home\n%s", path, res.StatusCode, page)
		}
		pages = append(pages, page)
	}
	if pages[0] != pages[1] {
		t.Error("the 404 pages of two addresses differ")
	}
}

// The theme form keeps the choice a year (system forgets it) and goes back
// to its page, only ever one of this site.
func TestThemeChoice(t *testing.T) {
	srv := themeServer(t)
	for _, c := range []struct {
		theme, back string
		status      int
		location    string
		cookie      string // the cookie's value; "-" for a cleared one, "" for none
	}{
		{"dark", "/share/abc?range=7d", http.StatusSeeOther, "/share/abc?range=7d", "dark"},
		{"light", "/sites", http.StatusSeeOther, "/sites", "light"},
		{"system", "/login", http.StatusSeeOther, "/login", "-"},
		{"dark", "", http.StatusSeeOther, "/", "dark"},
		{"dark", "//evil.example/x", http.StatusSeeOther, "/", "dark"},
		{"dark", "https://evil.example/", http.StatusSeeOther, "/", "dark"},
		{"dark", `/\evil.example`, http.StatusSeeOther, "/", "dark"},
		{"dark", "/\t/evil.example", http.StatusSeeOther, "/", "dark"},
		{"purple", "/sites", http.StatusBadRequest, "", ""},
		{"", "/sites", http.StatusBadRequest, "", ""},
	} {
		form := url.Values{"theme": {c.theme}, "back": {c.back}}
		r := httptest.NewRequest(http.MethodPost, "/theme", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res := serve(srv, r)
		if res.StatusCode != c.status || res.Header.Get("Location") != c.location {
			t.Errorf("theme %q back %q: %d to %q, want %d to %q", c.theme, c.back, res.StatusCode, res.Header.Get("Location"),
				c.status, c.location)
		}
		var got *http.Cookie
		for _, ck := range res.Cookies() {
			if ck.Name == themeCookie {
				got = ck
			}
		}
		switch {
		case c.cookie == "" && got != nil:
			t.Errorf("theme %q: set the cookie %v", c.theme, got)
		case c.cookie == "-" && (got == nil || got.MaxAge >= 0):
			t.Errorf("theme %q: the cookie %v, want it cleared", c.theme, got)
		case c.cookie != "" && c.cookie != "-" && (got == nil || got.Value != c.cookie ||
			got.MaxAge != int(365*24*time.Hour/time.Second) || !got.HttpOnly || got.SameSite != http.SameSiteLaxMode || got.Path != "/"):
			t.Errorf("theme %q: the cookie %v, want %s for a year, HttpOnly, SameSite=Lax, on every path", c.theme, got, c.cookie)
		}
	}
}

// The style sheet's dark colours are one palette written twice (for the
// system's preference and for the choice), and it redefines every colour
// of the light one; no colour is written anywhere else, so every rule
// follows the theme.
func TestStyleSheetThemes(t *testing.T) {
	b, err := fs.ReadFile(files, "assets/app.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	block := func(selector string) string {
		t.Helper()
		i := strings.Index(css, selector+" {")
		if i < 0 {
			t.Fatalf("no rule %s", selector)
		}
		end := strings.Index(css[i:], "}")
		return css[i : i+end+1]
	}
	light, system, chosen := block(":root"), block(":root:not([data-theme])"), block(`:root[data-theme="dark"]`)
	props := func(rule string) []string {
		var names []string
		for _, m := range regexp.MustCompile(`(--[\w-]+|color-scheme):`).FindAllStringSubmatch(rule, -1) {
			names = append(names, m[1])
		}
		slices.Sort(names)
		return names
	}
	fields := func(rule string) []string { return strings.Fields(rule[strings.Index(rule, "{"):]) }
	if diff := cmp.Diff(fields(system), fields(chosen)); diff != "" {
		t.Errorf("the dark palettes differ (-system +chosen):\n%s", diff)
	}
	wantDark := slices.DeleteFunc(props(light), func(p string) bool { return p == "--radius" })
	if diff := cmp.Diff(wantDark, props(chosen)); diff != "" {
		t.Errorf("the dark palette's properties (-light +dark):\n%s", diff)
	}
	rest := strings.NewReplacer(light, "", system, "", chosen, "").Replace(css)
	if m := regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(`).FindAllString(rest, -1); len(m) > 0 {
		t.Errorf("colours outside the palettes: %q", m)
	}
}

// The chart is drawn without colours of its own: its lines, areas, grid
// and labels are classes the style sheet colours.
func TestChartHasNoColours(t *testing.T) {
	day := func(d int, v, pv int64) stats.DayCount {
		return stats.DayCount{Date: time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC), Visitors: v, Pageviews: pv}
	}
	for name, svg := range map[string]string{
		"one day":       string(chartSVG([]stats.DayCount{day(1, 3, 5)}, nil, stats.IntervalDay, "")),
		"days compared": string(chartSVG([]stats.DayCount{day(1, 3, 5), day(2, 4, 9)}, []stats.DayCount{day(1, 1, 1), day(2, 2, 2)}, stats.IntervalDay, "")),
	} {
		if m := regexp.MustCompile(`(fill|stroke|style|color)=`).FindAllString(svg, -1); len(m) > 0 {
			t.Errorf("%s: the chart sets %q", name, m)
		}
		for _, class := range []string{chartVisitorsClass, chartPageviewsClass, chartGridClass, chartAxisLabelClass} {
			if !strings.Contains(svg, `class="`+class) {
				t.Errorf("%s: no element of class %s", name, class)
			}
		}
	}
}

// A page's address longer than maxBack is not repeated in its theme form,
// which then goes home: a Location of it could be refused on the way back.
func TestThemeBackIsBounded(t *testing.T) {
	srv := themeServer(t)
	back := regexp.MustCompile(`name="back" value="([^"]*)"`)
	for path, want := range map[string]string{
		"/login?next=%2Fsites":                           "/login?next=%2Fsites",
		"/login?next=%2F" + strings.Repeat("a", maxBack): "",
	} {
		res := serve(srv, httptest.NewRequest(http.MethodGet, path, nil))
		m := back.FindStringSubmatch(body(t, res))
		if m == nil || html.UnescapeString(m[1]) != want {
			t.Errorf("the login page at %.40s…: back %.60q, want %q", path, m, want)
		}
	}
}
