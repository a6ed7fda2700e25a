package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/ingest"
)

// pixelGIF is a transparent 1×1 GIF89a: one colour table of two entries,
// a graphic control extension making index 0 transparent, and one pixel of
// it.
var pixelGIF = []byte{
	'G', 'I', 'F', '8', '9', 'a', 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00,
	0x00, 0x00, 0x00, 0xff, 0xff, 0xff,
	0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
	0x02, 0x02, 0x44, 0x01, 0x00,
	0x3b,
}

// pixelRefused are the fields of POST /e the pixel does not take: props,
// revenue and scroll depth need the script, and a visitor id in an image's
// address (one per e-mail recipient) would follow a person. Each, also as
// name[key] or name.key, is refused with 400 naming it; any other
// parameter the pixel does not read is ignored.
var pixelRefused = []string{"props", "revenue", "scroll_depth", "visitor_id", "checkout_session_id", "hash_routes"}

// pixel records the event of an image a page (or an e-mail) loads, as
// POST /e does, and answers the image: pages that run no script count too.
func (s *Server) pixel(c echo.Context) error {
	in, err := pixelInput(c.Request())
	if err != nil {
		return err
	}
	if err := s.trackBrowser(c, in); err != nil {
		return err
	}
	pixelHeaders(c.Response().Header())
	return c.Blob(http.StatusOK, "image/gif", pixelGIF)
}

// pixelHead answers HEAD as GET would answer an accepted event, without
// looking at the request or recording anything: mail security scanners
// send HEAD to the images of the messages they check.
func (s *Server) pixelHead(c echo.Context) error {
	h := c.Response().Header()
	pixelHeaders(h)
	h.Set(echo.HeaderContentType, "image/gif")
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(pixelGIF)))
	return c.NoContent(http.StatusOK)
}

// pixelHeaders are the headers of the image: never cached, so that every
// load reaches the server, and loadable by pages of any origin.
func pixelHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store, max-age=0")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
}

// pixelInput reads the pixel's event from the query string. Without a url,
// the page is the request's Referer, which the ingest service then holds
// to the site's domain as it would the url.
func pixelInput(r *http.Request) (ingest.Input, error) {
	p, err := pixelParams(r.URL.RawQuery)
	if err != nil {
		return ingest.Input{}, err
	}
	name, named := p["event_name"]
	if !named {
		name = ingest.PageviewName
	}
	in := ingest.Input{Pageview: name == ingest.PageviewName, SiteID: p["site_id"], URL: p["url"], Referrer: p["referrer"], EventName: name}
	if in.URL == "" {
		in.URL = r.Referer()
	}
	return in, nil
}

// pixelRead are the query parameters the pixel reads.
var pixelRead = []string{"site_id", "url", "referrer", "event_name"}

// pixelParams reads the parameters of pixelRead from a raw query string,
// and refuses those of pixelRefused. url.Values drops a pair it cannot
// decode (a bad escape, a ';') without a word, and keeps a parameter's
// first value: props=%zz would pass, an event_name lost so would record a
// pageview, a url lost so the Referer's page. So a parameter is known here
// by its name alone, each of pixelRead is read at most once, and one whose
// value cannot be decoded is a 400 naming it — but for the referrer,
// dropped as one that is no URL is.
func pixelParams(raw string) (map[string]string, error) {
	p := make(map[string]string, len(pixelRead))
	var refused uint // bit i: a parameter named pixelRefused[i]
	var unread error // the first parameter of pixelRead that cannot be read
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			continue // no name: a parameter the pixel does not read
		}
		if i := slices.Index(pixelRefused, paramBase(key)); i >= 0 {
			refused |= 1 << i
			continue
		}
		if unread != nil || !slices.Contains(pixelRead, key) {
			continue
		}
		if _, twice := p[key]; twice {
			unread = errs.InvalidField(key, "%s is given twice: give it once", key)
			continue
		}
		value, err := url.QueryUnescape(v)
		switch {
		case err == nil && !strings.Contains(v, ";"):
		case key == "referrer":
			value = "" // dropped, as one that is no URL is
		default:
			unread = errs.InvalidField(key, "%s is not a percent-encoded value (a bad %%-escape, or a ';')", key)
		}
		p[key] = value
	}
	for i, name := range pixelRefused { // in this order: one answer for one request
		if refused&(1<<i) != 0 {
			return nil, errs.InvalidField(name, "the pixel takes no %s: send such events from tally.js (POST /e)", name)
		}
	}
	return p, unread
}

// paramBase is a query parameter's name without a key: props[plan] and
// props.plan are props.
func paramBase(name string) string {
	if i := strings.IndexAny(name, "[."); i >= 0 {
		return name[:i]
	}
	return name
}
