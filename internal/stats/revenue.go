package stats

import (
	"cmp"
	"context"
	"math"
	"sort"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// PendingCounter counts payments that wait for an exchange rate.
type PendingCounter interface {
	CountPending(ctx context.Context, site model.SiteID, from, to time.Time) (int64, error)
}

// Labels of rows without a value: revenue's, and NoneLabel also the
// events without the property of an event-properties report.
const (
	UnattributedLabel = "Unattributed"
	NoneLabel         = "(none)"
)

// Revenue reports payments and refunds converted into the site's base
// currency: totals (with the range's visitors), a daily series, and
// optionally a breakdown by the source, channel, entry page, campaign,
// country or device of the attribution model's touch.
func (s *Service) Revenue(ctx context.Context, p auth.Principal, r Request) (RevenueReport, error) {
	var res RevenueReport
	var err error
	if r.Attribution, err = ParseAttribution(r.Attribution, ""); err != nil { // "" is the default
		return res, err
	}
	sc, err := s.resolve(ctx, p, r)
	if err != nil {
		return res, err
	}
	// money, and the visitors it is divided by, are never sampled; the
	// visitors are those of the visits the filters select, as the overview
	// counts them (before the filters turn into the payments' columns)
	sc.sample = 0
	visitorsQuery := sc.query(Events, nil, []Metric{Visitors})
	if sc.req.Filters, err = paymentFilters(sc.req.Filters, r.Attribution); err != nil {
		return res, err
	}
	metrics := revenueMetrics(sc.site.ClientRevenue.Included)
	base := Eq(BaseCurrency, sc.site.BaseCurrency)
	q := sc.query(Payments, []Dimension{Day(sc.tz)}, metrics, base)
	q.WithTotals = true
	var daily, rows []Row
	var totals, visitors []float64
	var pending int64
	fns := []func(context.Context) error{
		func(ctx context.Context) (err error) { daily, totals, err = s.rowsAndTotals(ctx, q); return err },
		func(ctx context.Context) (err error) { visitors, err = s.total(ctx, visitorsQuery); return err },
		func(ctx context.Context) (err error) {
			pending, err = s.pending.CountPending(ctx, sc.site.ID, sc.from, sc.to)
			return err
		},
	}
	if r.Breakdown != "" {
		bq := sc.query(Payments, []Dimension{RevenueBy(r.Breakdown, r.Attribution)}, metrics, base)
		fns = append(fns, func(ctx context.Context) (err error) { rows, err = s.rows(ctx, bq); return err })
	}
	if err := parallel(ctx, fns...); err != nil {
		return res, err
	}
	res = RevenueReport{Currency: sc.site.BaseCurrency, Totals: revenueSummary(revenueTotals(totals), count(visitors[0])),
		Breakdown: revenueRows(rows, r.Breakdown != ""), By: r.Breakdown, Attribution: r.Attribution,
		LegacyModel: legacyName(r.Attribution), Pending: pending, ClientRevenueIncluded: sc.site.ClientRevenue.Included}
	byDay := map[string][]float64{}
	for _, row := range daily {
		byDay[row.Dims[0]] = row.Metrics
	}
	for d := r.DateFrom; !d.After(r.DateTo); d = d.AddDate(0, 0, 1) {
		res.Series = append(res.Series, RevenueDay{Date: d, RevenueTotals: revenueTotals(byDay[d.Format(time.DateOnly)])})
	}
	res.Meta = sc.meta()
	return res, nil
}

// revenueMetrics are the revenue report's metrics, in the order
// revenueTotals reads them: revenue, payments and paying visitors count what
// the tracking script reported only when the site includes it;
// client_reported always counts it.
func revenueMetrics(includeClient bool) []Metric {
	if includeClient {
		return []Metric{Revenue, Refunds, PaymentCount, RefundCount, PayingVisitors, ClientReported}
	}
	return []Metric{VerifiedRevenue, Refunds, VerifiedCount, RefundCount, VerifiedPaying, ClientReported}
}

// paymentColumns are the payments' attribution fields a filter dimension
// reads (attributionColumn gives each model's column).
var paymentColumns = map[string]string{
	Source.Name:      "source",
	Country.Name:     "country_code",
	Device.Name:      "device",
	UTMSource.Name:   "utm_source",
	UTMMedium.Name:   "utm_medium",
	UTMCampaign.Name: "utm_campaign",
	UTMContent.Name:  "utm_content",
}

// paymentFilters turns report filters into filters of the payments table,
// on the touch of the attribution model. A payment knows the source,
// channel, campaign, country and device of its visit, not the pages, their
// hosts or the browser.
func paymentFilters(fs []Filter, attribution string) ([]Filter, error) {
	out := make([]Filter, 0, len(fs))
	for _, f := range fs {
		col, ok := paymentColumns[f.Dim.Name]
		switch {
		case f.Dim.Name == Channel.Name:
			f.Dim = paymentChannel(attribution)
		case !ok:
			return nil, errs.InvalidField(filterParam(f.Dim), "the revenue report cannot be filtered by %s", filterParam(f.Dim))
		default:
			f.Dim = Dimension{Name: f.Dim.Name, exprs: map[Table]string{Payments: attributionColumn(attribution, col)}}
		}
		out = append(out, f)
	}
	return out, nil
}

// filterParam is the query parameter of a filter dimension.
func filterParam(d Dimension) string {
	for _, p := range FilterParams {
		if p.Dim.Name == d.Name {
			return p.Param
		}
	}
	return d.Name
}

func revenueTotals(m []float64) RevenueTotals {
	if len(m) < 6 {
		return RevenueTotals{}
	}
	t := RevenueTotals{Revenue: count(m[0]), Refunds: count(m[1]), Payments: count(m[2]), RefundCount: count(m[3]),
		PayingVisitors: count(m[4]), ClientReported: count(m[5])}
	t.Net = t.Revenue - t.Refunds
	return t
}

// revenueSummary adds the range's visitors to the totals, with the revenue
// per visitor (net ÷ visitors, minor units to two decimals) and the paying
// visitor rate (paying visitors ÷ visitors × 100, one decimal); both are 0
// when there are no visitors.
func revenueSummary(t RevenueTotals, visitors int64) RevenueSummary {
	out := RevenueSummary{RevenueTotals: t, Visitors: visitors}
	if visitors > 0 {
		out.RevenuePerVisitor = math.Round(float64(t.Net)/float64(visitors)*100) / 100
		out.PayingVisitorRate = percent(float64(t.PayingVisitors), float64(visitors))
	}
	return out
}

// revenueRows orders a breakdown (labelled by RevenueBy): by revenue, then
// net, then value.
func revenueRows(rows []Row, want bool) []RevenueRow {
	out := make([]RevenueRow, 0, len(rows))
	if !want {
		return out
	}
	for _, row := range rows {
		out = append(out, RevenueRow{Value: row.Dims[0], RevenueTotals: revenueTotals(row.Metrics)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Revenue != out[j].Revenue {
			return out[i].Revenue > out[j].Revenue
		}
		if out[i].Net != out[j].Net {
			return out[i].Net > out[j].Net
		}
		return out[i].Value < out[j].Value
	})
	return out
}

// legacyModels are the values of the deprecated model parameter and the
// models they always meant (its last_touch skipped direct visits).
var legacyModels = map[string]string{"last_touch": LastNonDirect, "first_touch": FirstTouch}

// legacyName is a model's value of the deprecated model parameter, "" for a
// model it cannot name.
func legacyName(attribution string) string {
	for name, m := range legacyModels {
		if m == attribution {
			return name
		}
	}
	return ""
}

// parseRevenue checks the revenue report's extra parameters: the breakdown
// and the attribution model.
func parseRevenue(r *Request, breakdown, attribution, legacy string) error {
	if breakdown != "" {
		if _, ok := RevenueBreakdowns[breakdown]; !ok {
			return errs.InvalidField("breakdown", "must be source, channel, page, campaign, country or device")
		}
	}
	m, err := ParseAttribution(attribution, legacy)
	if err != nil {
		return err
	}
	r.Breakdown, r.Attribution = breakdown, m
	return nil
}

// ParseAttribution is the attribution model of the attribution parameter or
// of the deprecated model parameter (both may be given if they agree);
// LastNonDirect when neither is.
func ParseAttribution(attribution, legacy string) (string, error) {
	if _, ok := attributionPrefix[attribution]; attribution != "" && !ok {
		return "", errs.InvalidField("attribution", "must be last_non_direct, last_touch or first_touch")
	}
	if legacy != "" {
		m, ok := legacyModels[legacy]
		if !ok {
			return "", errs.InvalidField("model", "must be last_touch or first_touch (model is deprecated: use attribution)")
		}
		if attribution != "" && attribution != m {
			return "", errs.InvalidField("attribution", "model=%s (deprecated) means attribution=%s, which contradicts attribution=%s",
				legacy, m, attribution)
		}
		attribution = m
	}
	return cmp.Or(attribution, LastNonDirect), nil
}
