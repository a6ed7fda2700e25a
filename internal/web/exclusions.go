package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/exclusions"
	"github.com/tally-analytics/tally/internal/model"
)

// exclusionsText is a site's exclusions as the settings form shows them:
// one entry a line.
type exclusionsText struct {
	Pages, Addresses, Hosts string
}

func exclusionsTextOf(e model.Exclusions) exclusionsText {
	return exclusionsText{Pages: strings.Join(e.Pages, "\n"), Addresses: strings.Join(e.Addresses, "\n"),
		Hosts: strings.Join(e.Hosts, "\n")}
}

// exclusionLists are the textareas of the form, each with its field's
// name in the API and its label.
var exclusionLists = []struct{ form, field, label string }{
	{"excluded_pages", exclusions.FieldPages, "Excluded pages"},
	{"excluded_addresses", exclusions.FieldAddresses, "Excluded addresses"},
	{"excluded_hosts", exclusions.FieldHosts, "Excluded hostnames"},
}

// lines splits a textarea into its entries, blank lines left out, and
// says on which line (from 1) each was.
func lines(text string) (entries []string, at []int) {
	entries = []string{}
	for i, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			entries, at = append(entries, l), append(at, i+1)
		}
	}
	return entries, at
}

// setExclusions saves the site's exclusions from the settings form. A bad
// entry is shown with its list and line, the form keeping what was typed.
func (s *Server) setExclusions(c echo.Context) error {
	u, _ := session(c)
	typed := exclusionsText{Pages: c.FormValue("excluded_pages"), Addresses: c.FormValue("excluded_addresses"),
		Hosts: c.FormValue("excluded_hosts")}
	var in accounts.SiteChange
	lineOf := map[string][]int{}
	for i, to := range []**[]string{&in.ExcludedPages, &in.ExcludedAddresses, &in.ExcludedHosts} {
		entries, at := lines([]string{typed.Pages, typed.Addresses, typed.Hosts}[i])
		*to, lineOf[exclusionLists[i].field] = &entries, at
	}
	_, err := s.deps.Sites.Update(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), in)
	if err == nil {
		return s.settingsRedirect(c, "exclusions", "exclusions")
	}
	return s.settingsError(c, "exclusions", err, func(p *settingsPage, e *errs.Error) {
		p.Error, p.Exclusions = exclusionMessage(e, lineOf), typed
	})
}

// exclusionMessage says a refused entry's list and line in words
// (excluded_pages.2 is the third entry: the line it was on).
func exclusionMessage(e *errs.Error, lineOf map[string][]int) string {
	field, index, _ := strings.Cut(e.Field, ".")
	for _, l := range exclusionLists {
		if l.field != field {
			continue
		}
		if i, err := strconv.Atoi(index); err == nil && i >= 0 && i < len(lineOf[field]) {
			return fmt.Sprintf("%s, line %d: %s", l.label, lineOf[field][i], e.Message)
		}
		return l.label + ": " + e.Message
	}
	return e.Message
}
