package stats

import (
	"context"
	"net/url"
	"strings"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// SegmentSource finds the segment a report applies: one of another site,
// or none, is segment_not_found (the segments service).
type SegmentSource interface {
	Of(ctx context.Context, site model.SiteID, id model.SegmentID) (model.Segment, error)
}

// SegmentParam is the query parameter that applies a saved segment.
const SegmentParam = "segment"

// SegmentNotFound is how a segment the caller cannot see or apply is
// answered: it does not exist, its id is no UUID, or it is of another
// site.
func SegmentNotFound() *errs.Error {
	return errs.E(errs.NotFound, "segment_not_found", "segment not found")
}

// ParamOf is the query parameter of a filter on d: props[key] for a prop.
func ParamOf(d Dimension) string {
	for _, p := range FilterParams {
		if p.Dim.Name == d.Name {
			return p.Param
		}
	}
	return d.Name // a prop's dimension is named after its parameter
}

// FilterSet is filters as parameters and their values: a segment's
// filters, and the canonical form it keeps them in (values as ParseFilters
// normalised them: country codes upper-cased, device classes spelt as
// tally spells them).
func FilterSet(filters []Filter) map[string]string {
	set := make(map[string]string, len(filters))
	for _, f := range filters {
		if v, ok := f.Value.(string); ok {
			set[ParamOf(f.Dim)] = v
		}
	}
	return set
}

// ParseFilterSet reads filters given as parameters and values (a segment's)
// by the stats API's own rules (ParseFilters): a bad value is refused with
// the message the stats API gives, naming its parameter. Unlike a query
// string, where other parameters have their own meanings, a parameter that
// is not a filter is refused too, and so is an empty set.
func ParseFilterSet(set map[string]string) ([]Filter, error) {
	if len(set) == 0 {
		return nil, errs.InvalidField("", "at least one filter is required")
	}
	v := make(url.Values, len(set))
	for param, value := range set {
		if !isFilterParam(param) {
			return nil, errs.InvalidField(param, "%q is not a filter: the filters are %s and props[key]", param, filterNames())
		}
		v.Set(param, value)
	}
	return ParseFilters(v)
}

// isFilterParam reports whether param is one of the filter parameters
// (whether its key is a valid prop key is ParseFilters' to say).
func isFilterParam(param string) bool {
	for _, f := range FilterParams {
		if f.Param == param {
			return true
		}
	}
	return strings.HasPrefix(param, propParamPrefix)
}

func filterNames() string {
	names := make([]string, len(FilterParams))
	for i, f := range FilterParams {
		names[i] = f.Param
	}
	return strings.Join(names, ", ")
}

// CombineFilters adds a segment's filters to a request's own: both apply,
// as if all were given by hand. A dimension both filter is refused rather
// than decided for either (the request's value would silently replace the
// segment's, or the two would select nothing), naming segment; so are more
// prop filters together than a request may have. A group's filters (an
// or of the query API v2) count each, as they do alone.
func CombineFilters(own, segment []Filter) ([]Filter, error) {
	var leaves []Filter
	for _, g := range own {
		leaves = append(leaves, g.leaves()...)
	}
	props := 0
	for _, f := range leaves {
		if IsPropFilter(f) {
			props++
		}
	}
	out := append([]Filter(nil), own...)
	for _, f := range segment {
		param := ParamOf(f.Dim)
		for _, o := range leaves {
			if o.Dim.Name == f.Dim.Name {
				return nil, errs.InvalidField(SegmentParam, "the segment already filters by %s: leave %s out, or filter without the segment", param, param)
			}
		}
		if IsPropFilter(f) {
			if props++; props > MaxPropFilters {
				return nil, errs.InvalidField(SegmentParam, "at most %d prop filters, the segment's included", MaxPropFilters)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// settleFilters gives the scope the filters of the segment its request
// names, combined with the request's own (CombineFilters), then checks
// that the endpoint has the filter it needs.
func (s *Service) settleFilters(ctx context.Context, sc *scope) error {
	if sc.req.Segment != "" {
		if s.segments == nil {
			return SegmentNotFound().WithField(SegmentParam)
		}
		sg, err := s.segments.Of(ctx, sc.site.ID, sc.req.Segment)
		if errs.Is(err, errs.NotFound) {
			return SegmentNotFound().WithField(SegmentParam)
		}
		if err != nil {
			return err
		}
		filters, err := ParseFilterSet(sg.Filters)
		if err != nil { // a rule tightened since the segment was saved
			return errs.InvalidField(SegmentParam, "the segment's filters are no longer valid: %s", err)
		}
		if sc.req.Filters, err = CombineFilters(sc.req.Filters, filters); err != nil {
			return err
		}
	}
	return sc.req.checkRequired()
}

// parseSegment reads the id of the segment to apply, if any; whether it
// names one of the site's is the segments' to say (SegmentSource).
func parseSegment(v url.Values) (model.SegmentID, error) {
	s, ok := v[SegmentParam]
	if !ok {
		return "", nil
	}
	id := strings.TrimSpace(s[0])
	if id == "" {
		return "", errs.InvalidField(SegmentParam, "must be the id of one of the site's segments")
	}
	return model.SegmentID(id), nil
}

// checkRequired refuses a request without the filter its endpoint needs,
// once a segment has added its filters: a segment of German visitors
// gives the regions report its country.
func (r Request) checkRequired() error {
	if r.required == "" {
		return nil
	}
	for _, f := range r.Filters {
		if ParamOf(f.Dim) == r.required {
			return nil
		}
	}
	return errs.InvalidField(r.required, "%s is required (%s)", r.required, requiredHints[r.required])
}

// requiredHints say what a required filter takes.
var requiredHints = map[string]string{"country": "an ISO 3166-1 code such as US", "region": "an ISO 3166-2 code such as US-CA",
	"browser": "a browser such as Chrome", "os": "an operating system such as Windows"}
