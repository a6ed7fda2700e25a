package export

import (
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/stats"
)

// Name is a report's name in file names: the report (the last segment of
// its path: pages, entry-pages, conversions…) and the variant the request
// asks for, if any: campaigns-utm_source (not for the default,
// utm_campaign), revenue-country, revenue-country-first_touch,
// revenue-last_touch (not for the default model, last_non_direct), and
// retention-week (the unit of its cohorts, always).
func Name(report string, r stats.Request) string {
	parts := []string{report}
	if r.UTMBy != "" && r.UTMBy != stats.DefaultUTMBy {
		parts = append(parts, r.UTMBy)
	}
	if r.Breakdown != "" {
		parts = append(parts, r.Breakdown)
	}
	if r.Attribution != "" && r.Attribution != stats.LastNonDirect {
		parts = append(parts, r.Attribution)
	}
	if report == "retention" {
		// the unit of its cohorts, which its rows do not name
		parts = append(parts, r.Interval)
	}
	return strings.Join(parts, "-")
}

// FileName is the file name of a report's CSV:
// <name>-<site_id>-<date_from>-<date_to>.csv, or <name>-<site_id>.csv for a
// report without dates (realtime).
func FileName(report string, r stats.Request) string {
	return fileName(Name(report, r), r) + ".csv"
}

// ZipName is the file name of the download of every report of r's range:
// reports-<site_id>-<date_from>-<date_to>.zip.
func ZipName(r stats.Request) string {
	return fileName("reports", r) + ".zip"
}

func fileName(name string, r stats.Request) string {
	parts := []string{name, string(r.SiteID)}
	if !r.DateFrom.IsZero() {
		parts = append(parts, r.DateFrom.Format(time.DateOnly), r.DateTo.Format(time.DateOnly))
	}
	return safe(strings.Join(parts, "-"))
}

// safe keeps a file name to letters, digits, dot, dash and underscore, so it
// needs no escaping in a header and means nothing to a file system.
func safe(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// Attachment is the Content-Disposition of a download named name (a name
// from FileName or ZipName).
func Attachment(name string) string {
	return `attachment; filename="` + safe(name) + `"`
}
