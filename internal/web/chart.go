package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/stats"
)

// intervalNames and axisFormats name a chart's unit and write its points
// on the axis.
var (
	intervalNames = map[string]string{stats.IntervalHour: "hour", stats.IntervalDay: "day", stats.IntervalWeek: "week",
		stats.IntervalMonth: "month"}
	axisFormats = map[string]string{stats.IntervalHour: "15:04", stats.IntervalDay: "Jan 2", stats.IntervalWeek: "Jan 2",
		stats.IntervalMonth: "Jan 2006"}
)

// seriesLabel writes a point of a series of interval for people: its day,
// an hour's day and time, a week's Monday, a month.
func seriesLabel(t time.Time, interval string) string {
	switch interval {
	case stats.IntervalHour:
		return t.Format("2006-01-02 15:04")
	case stats.IntervalWeek:
		return "week of " + t.Format(time.DateOnly)
	case stats.IntervalMonth:
		return t.Format("January 2006")
	}
	return t.Format(time.DateOnly)
}

// Chart geometry (the SVG scales to its container).
const (
	chartW, chartH         = 800.0, 240.0
	padLeft, padRight      = 48.0, 28.0
	padTop, padBottom      = 12.0, 28.0
	plotW, plotH           = chartW - padLeft - padRight, chartH - padTop - padBottom
	maxXLabels             = 7
	chartVisitorsClass     = "series-visitors"
	chartPageviewsClass    = "series-pageviews"
	chartPreviousClass     = "series-previous"
	chartGridClass         = "grid"
	chartAxisLabelClass    = "axis-label"
	chartBarWidthFraction  = 0.6
	chartSinglePointRadius = 4
)

// chartMetric is one of the overview's headline numbers, which its chart
// can draw alone: how it is read from a period's metrics and from a unit
// of the series, written for people and on the axis, and compared.
type chartMetric struct {
	key, label string
	of         func(stats.Metrics) float64
	at         func(stats.DayCount) float64
	kind       metricKind
	// changeOf is the metric's change; bounce rates change in points
	changeOf func(stats.Change) *float64
}

type metricKind int

const (
	countMetric    metricKind = iota
	ratioMetric               // views per visit, two decimals
	rateMetric                // percent, one decimal; lower is better
	durationMetric            // seconds
)

// chartMetrics are the headline numbers in the order the card shows them,
// Plausible's.
var chartMetrics = []chartMetric{
	{key: "visitors", label: "Unique visitors", kind: countMetric,
		of: func(m stats.Metrics) float64 { return float64(m.Visitors) }, at: func(d stats.DayCount) float64 { return float64(d.Visitors) },
		changeOf: func(c stats.Change) *float64 { return c.Visitors }},
	{key: "visits", label: "Total visits", kind: countMetric,
		of: func(m stats.Metrics) float64 { return float64(m.Visits) }, at: func(d stats.DayCount) float64 { return float64(d.Visits) },
		changeOf: func(c stats.Change) *float64 { return c.Visits }},
	{key: "pageviews", label: "Total pageviews", kind: countMetric,
		of: func(m stats.Metrics) float64 { return float64(m.Pageviews) }, at: func(d stats.DayCount) float64 { return float64(d.Pageviews) },
		changeOf: func(c stats.Change) *float64 { return c.Pageviews }},
	{key: "views_per_visit", label: "Views per visit", kind: ratioMetric,
		of: func(m stats.Metrics) float64 { return m.ViewsPerVisit }, at: func(d stats.DayCount) float64 { return d.ViewsPerVisit },
		changeOf: func(c stats.Change) *float64 { return c.ViewsPerVisit }},
	{key: "bounce_rate", label: "Bounce rate", kind: rateMetric,
		of: func(m stats.Metrics) float64 { return m.BounceRate }, at: func(d stats.DayCount) float64 { return d.BounceRate }},
	{key: "visit_duration", label: "Visit duration", kind: durationMetric,
		of: func(m stats.Metrics) float64 { return m.VisitDuration }, at: func(d stats.DayCount) float64 { return d.VisitDuration },
		changeOf: func(c stats.Change) *float64 { return c.VisitDuration }},
}

// chartMetricOf is the headline metric of a key.
func chartMetricOf(key string) (chartMetric, bool) {
	for _, m := range chartMetrics {
		if m.key == key {
			return m, true
		}
	}
	return chartMetric{}, false
}

// show writes the metric of a period for people.
func (m chartMetric) show(ms stats.Metrics) string { return m.format(m.of(ms)) }

// raw writes it as it is (the card's data-value).
func (m chartMetric) raw(ms stats.Metrics) string {
	if m.kind == countMetric {
		return strconv.FormatInt(int64(m.of(ms)), 10)
	}
	return rawFloat(m.of(ms))
}

func (m chartMetric) format(v float64) string {
	switch m.kind {
	case ratioMetric:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case rateMetric:
		return present.Percent(v)
	case durationMetric:
		return present.Duration(v)
	}
	return present.Number(int64(v))
}

// whole reports whether the metric's axis goes by whole units (counts,
// seconds), which its labels write: its lines are then at whole values.
func (m chartMetric) whole() bool { return m.kind == countMetric || m.kind == durationMetric }

// axis writes a value of the chart's axis: counts short (1.2k); ratios
// and rates without the float noise of a quarter of the top (0.15, not
// 0.15000000000000002).
func (m chartMetric) axis(v float64) string {
	v = math.Round(v*1e4) / 1e4
	switch m.kind {
	case ratioMetric:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case rateMetric:
		return strconv.FormatFloat(v, 'f', -1, 64) + "%"
	case durationMetric:
		return present.Duration(v)
	}
	return shortNumber(int64(v))
}

// change writes the metric's change against the previous period, and its
// class (up, down or flat: a bounce rate that falls is up).
func (m chartMetric) change(c stats.Change) (text, class string) {
	if m.kind == rateMetric {
		return present.Points(c.BounceRate), pointsClass(c.BounceRate, true)
	}
	v := m.changeOf(c)
	return present.Change(v), changeClass(v)
}

// values are the metric's at each unit of a series.
func (m chartMetric) values(points []stats.DayCount) []float64 {
	out := make([]float64, len(points))
	for i, p := range points {
		out[i] = m.at(p)
	}
	return out
}

// chartSeries is a line of the chart, with its area below it or not.
type chartSeries struct {
	class string
	vals  []float64
	area  bool
}

// chartSVG draws the metric of key per unit of interval (an area and a
// line), or without a key visitors (area and line) and pageviews (line);
// and, when given, the previous period's metric (or visitors) dashed. It is
// drawn on the server: no chart library, and it reads without JavaScript. A
// table of the same numbers follows it for screen readers (in the card
// template).
func chartSVG(points, previous []stats.DayCount, interval, key string) template.HTML {
	visitors, _ := chartMetricOf("visitors")
	pageviews, _ := chartMetricOf("pageviews")
	m, one := chartMetricOf(key)
	title := "Visitors and pageviews"
	series := []chartSeries{{chartVisitorsClass, visitors.values(points), true}, {chartPageviewsClass, pageviews.values(points), false}}
	prev := visitors.values(previous)
	if one {
		title, series, prev = m.label, []chartSeries{{chartVisitorsClass, m.values(points), true}}, m.values(previous)
	} else {
		m = visitors
	}
	var top float64
	for _, s := range append(series, chartSeries{vals: prev}) {
		for _, v := range s.vals {
			top = max(top, v)
		}
	}
	scale := niceMax(top, m.whole())
	n := len(points)
	x := func(i int) float64 {
		if n <= 1 {
			return padLeft + plotW/2
		}
		return padLeft + plotW*float64(i)/float64(n-1)
	}
	y := func(v float64) float64 { return padTop + plotH - plotH*v/scale }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-labelledby="chart-title" preserveAspectRatio="none">`, chartW, chartH)
	b.WriteString(`<title id="chart-title">` + title + ` per ` + intervalNames[interval] + `</title>`)
	// horizontal grid with four steps
	for i := 0; i <= 4; i++ {
		v := scale * float64(i) / 4
		if m.whole() {
			// 1.25 of a top of 5 is no count: the line goes at 1, as its label says
			v = math.Floor(v)
		}
		fmt.Fprintf(&b, `<line class="%s" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, chartGridClass, padLeft, chartW-padRight, y(v), y(v))
		fmt.Fprintf(&b, `<text class="%s" x="%g" y="%.1f" text-anchor="end">%s</text>`, chartAxisLabelClass, padLeft-6, y(v)+4,
			template.HTMLEscapeString(m.axis(v)))
	}
	// date labels, at most maxXLabels of them
	step := max(1, int(math.Ceil(float64(n)/maxXLabels)))
	for i := 0; i < n; i += step {
		fmt.Fprintf(&b, `<text class="%s" x="%.1f" y="%g" text-anchor="middle">%s</text>`, chartAxisLabelClass, x(i), chartH-8,
			template.HTMLEscapeString(points[i].Date.Format(axisFormats[interval])))
	}
	if n == 1 {
		// a bar a series, side by side
		w := plotW * chartBarWidthFraction / 2
		left := x(0) - w*float64(len(series))/2
		for i, s := range series {
			fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, s.class, left+w*float64(i), y(s.vals[0]), w,
				y(0)-y(s.vals[0]))
		}
	} else if n > 1 {
		line := func(vals []float64) string {
			var pts []string
			for i := 0; i < min(len(vals), n); i++ {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(vals[i])))
			}
			return strings.Join(pts, " ")
		}
		// the areas, then the previous period over them, then the lines
		for _, s := range series {
			if s.area {
				fmt.Fprintf(&b, `<polygon class="%s area" points="%.1f,%.1f %s %.1f,%.1f"/>`, s.class, x(0), y(0), line(s.vals), x(n-1), y(0))
			}
		}
		if len(prev) > 1 {
			fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, chartPreviousClass, line(prev))
		}
		for _, s := range series {
			fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, s.class, line(s.vals))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built above from numbers, fixed labels and escaped dates only
}

// sparklineSVG draws visitors per day as one small line (the sites list's
// summaries), from zero to the highest day; its title says the numbers.
func sparklineSVG(points []stats.DayCount) template.HTML {
	const w, h = 120.0, 28.0
	var top int64
	counts := make([]string, len(points))
	for i, p := range points {
		top = max(top, p.Visitors)
		counts[i] = strconv.FormatInt(p.Visitors, 10)
	}
	var pts []string
	for i, p := range points {
		x := w / 2
		if len(points) > 1 {
			x = w * float64(i) / float64(len(points)-1)
		}
		y := h - 1
		if top > 0 {
			y = 1 + (h-2)*(1-float64(p.Visitors)/float64(top))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" viewBox="0 0 %g %g" preserveAspectRatio="none" role="img"><title>Visitors a day: %s</title>`, w, h,
		strings.Join(counts, ", "))
	fmt.Fprintf(&b, `<polyline class="spark-line" points="%s"/></svg>`, strings.Join(pts, " "))
	return template.HTML(b.String()) //nolint:gosec // numbers only
}

// niceMax rounds a chart's top value up to 1, 2 or 5 × a power of ten: at
// least 4 for whole units, counts and seconds (whole steps of a quarter:
// visits of 0 s), and for other figures at least 1 (a bounce rate of 0 %).
func niceMax(v float64, whole bool) float64 {
	if whole && v <= 4 {
		return 4
	}
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func shortNumber(v int64) string {
	switch {
	case v >= 10_000_000:
		return fmt.Sprintf("%dM", v/1_000_000)
	case v >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(v)/1e6)
	case v >= 10_000:
		return fmt.Sprintf("%dk", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.1fk", float64(v)/1e3)
	}
	return fmt.Sprint(v)
}
