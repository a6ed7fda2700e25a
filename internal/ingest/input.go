package ingest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Limits of an event (spec "Limits" and DESIGN §6 Ingestion).
const (
	MaxProps         = 10
	MaxPropKeyLen    = 50
	MaxPropValueLen  = 2000
	MaxEventNameLen  = 120
	MaxURLLen        = 2048
	MaxUserAgentLen  = 512
	MaxVisitorIDLen  = 128
	MaxSiteIDLen     = 64
	PageviewName     = "pageview"
	maxReferrerLen   = 2048
	maxPathStoredLen = 1024
)

// Input is an event as a client sent it, before validation.
type Input struct {
	// Pageview is true for a pageview, false for a custom event.
	Pageview  bool
	SiteID    string
	URL       string
	Referrer  string
	UserAgent string
	IPAddress string
	// VisitorID is the client's own identifier (the tracker's analytics_vid); optional.
	VisitorID string
	EventName string
	// Props as decoded from JSON with UseNumber: string, json.Number or bool
	// values are valid.
	Props map[string]any
}

// event is a validated Input.
type event struct {
	pageview   bool
	site       model.SiteID
	url        *url.URL
	referrer   *url.URL // nil when absent
	userAgent  string
	ip         netip.Addr // invalid when absent
	visitorID  string
	name       string
	propKeys   []string
	propValues []string
}

// validate checks every rule and returns the first violation as an
// invalid_request (or invalid_props) error naming its field.
func validate(in Input) (event, error) {
	ev := event{pageview: in.Pageview, visitorID: in.VisitorID}
	site := strings.TrimSpace(in.SiteID)
	if site == "" {
		return ev, errs.InvalidField("site_id", "site_id is required")
	}
	if len(site) > MaxSiteIDLen {
		return ev, errs.E(errs.Invalid, "invalid_site_id", "unknown site").WithField("site_id")
	}
	ev.site = model.SiteID(site)

	u, err := parseEventURL(in.URL)
	if err != nil {
		return ev, err
	}
	ev.url = u
	if in.Referrer != "" {
		r, err := url.Parse(in.Referrer)
		if err != nil || len(in.Referrer) > maxReferrerLen || r.Host == "" || r.Scheme == "" {
			return ev, errs.InvalidField("referrer", "must be an absolute URL")
		}
		ev.referrer = r
	}
	ev.userAgent = truncateUTF8(strings.TrimSpace(in.UserAgent), MaxUserAgentLen)
	if in.IPAddress != "" {
		ip, err := netip.ParseAddr(strings.TrimSpace(in.IPAddress))
		if err != nil {
			return ev, errs.InvalidField("ip_address", "must be an IPv4 or IPv6 address")
		}
		ev.ip = ip.Unmap()
	}
	if len(in.VisitorID) > MaxVisitorIDLen {
		return ev, errs.InvalidField("visitor_id", "must be at most %d characters", MaxVisitorIDLen)
	}
	if in.Pageview {
		ev.name = PageviewName
	} else {
		name := strings.TrimSpace(in.EventName)
		switch {
		case name == "":
			return ev, errs.InvalidField("event_name", "event_name is required")
		case utf8.RuneCountInString(name) > MaxEventNameLen || !utf8.ValidString(name):
			return ev, errs.InvalidField("event_name", "must be 1 to %d characters", MaxEventNameLen)
		case name == PageviewName:
			return ev, errs.InvalidField("event_name", "%q is reserved for pageviews", PageviewName)
		}
		ev.name = name
	}
	ev.propKeys, ev.propValues, err = validateProps(in.Props)
	return ev, err
}

func parseEventURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errs.InvalidField("url", "url is required")
	}
	if len(raw) > MaxURLLen {
		return nil, errs.InvalidField("url", "must be at most %d characters", MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, errs.InvalidField("url", "must be an absolute http(s) URL")
	}
	return u, nil
}

func invalidProps(field, format string, args ...any) *errs.Error {
	return &errs.Error{Kind: errs.Invalid, Code: "invalid_props", Field: field, Message: fmt.Sprintf(format, args...)}
}

// validateProps applies the props limits and renders the values as strings
// (numbers in their shortest form, booleans as true/false), sorted by key.
func validateProps(props map[string]any) (keys, values []string, err error) {
	if len(props) > MaxProps {
		return nil, nil, invalidProps("props", "at most %d props are allowed, got %d", MaxProps, len(props))
	}
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values = make([]string, len(keys))
	for i, k := range keys {
		field := "props." + k
		if k == "" || utf8.RuneCountInString(k) > MaxPropKeyLen || !utf8.ValidString(k) {
			return nil, nil, invalidProps(field, "prop keys must be 1 to %d characters", MaxPropKeyLen)
		}
		switch v := props[k].(type) {
		case string:
			if utf8.RuneCountInString(v) > MaxPropValueLen {
				return nil, nil, invalidProps(field, "string values must be at most %d characters", MaxPropValueLen)
			}
			values[i] = v
		case bool:
			values[i] = strconv.FormatBool(v)
		case json.Number:
			f, err := v.Float64()
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, nil, invalidProps(field, "numbers must be finite")
			}
			values[i] = strconv.FormatFloat(f, 'f', -1, 64)
		case float64:
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, nil, invalidProps(field, "numbers must be finite")
			}
			values[i] = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			return nil, nil, invalidProps(field, "values must be a string, number or boolean")
		}
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	return keys, values, nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
