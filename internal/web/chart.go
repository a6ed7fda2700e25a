package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

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

// chartSVG draws visitors (area and line) and pageviews (line) per unit of
// interval, and, when given, the previous period's visitors (dashed). It is
// drawn on the server: no chart library, and it reads without JavaScript. A
// table of the same numbers follows it for screen readers (in the card
// template).
func chartSVG(points, previous []stats.DayCount, interval string) template.HTML {
	var top int64
	for _, p := range points {
		top = max(top, p.Visitors, p.Pageviews)
	}
	for _, p := range previous {
		top = max(top, p.Visitors)
	}
	scale := niceMax(top)
	n := len(points)
	x := func(i int) float64 {
		if n <= 1 {
			return padLeft + plotW/2
		}
		return padLeft + plotW*float64(i)/float64(n-1)
	}
	y := func(v int64) float64 { return padTop + plotH - plotH*float64(v)/float64(scale) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-labelledby="chart-title" preserveAspectRatio="none">`, chartW, chartH)
	b.WriteString(`<title id="chart-title">Visitors and pageviews per ` + intervalNames[interval] + `</title>`)
	// horizontal grid with four steps
	for i := 0; i <= 4; i++ {
		v := scale * int64(i) / 4
		fmt.Fprintf(&b, `<line class="%s" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, chartGridClass, padLeft, chartW-padRight, y(v), y(v))
		fmt.Fprintf(&b, `<text class="%s" x="%g" y="%.1f" text-anchor="end">%s</text>`, chartAxisLabelClass, padLeft-6, y(v)+4, shortNumber(v))
	}
	// date labels, at most maxXLabels of them
	step := max(1, int(math.Ceil(float64(n)/maxXLabels)))
	for i := 0; i < n; i += step {
		fmt.Fprintf(&b, `<text class="%s" x="%.1f" y="%g" text-anchor="middle">%s</text>`, chartAxisLabelClass, x(i), chartH-8,
			template.HTMLEscapeString(points[i].Date.Format(axisFormats[interval])))
	}
	if n == 1 {
		p := points[0]
		w := plotW * chartBarWidthFraction / 2
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, chartVisitorsClass, x(0)-w, y(p.Visitors), w, y(0)-y(p.Visitors))
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, chartPageviewsClass, x(0), y(p.Pageviews), w, y(0)-y(p.Pageviews))
	} else if n > 1 {
		line := func(vals func(i int) int64, count int) string {
			var pts []string
			for i := 0; i < count; i++ {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(vals(i))))
			}
			return strings.Join(pts, " ")
		}
		if len(previous) > 1 {
			fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, chartPreviousClass,
				line(func(i int) int64 { return previous[i].Visitors }, min(len(previous), n)))
		}
		visitors := line(func(i int) int64 { return points[i].Visitors }, n)
		fmt.Fprintf(&b, `<polygon class="%s area" points="%.1f,%.1f %s %.1f,%.1f"/>`, chartVisitorsClass, x(0), y(0), visitors, x(n-1), y(0))
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, chartVisitorsClass, visitors)
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"/>`, chartPageviewsClass, line(func(i int) int64 { return points[i].Pageviews }, n))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built above from numbers and escaped dates only
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

// niceMax rounds a chart's top value up to 1, 2 or 5 × a power of ten.
func niceMax(v int64) int64 {
	if v <= 4 {
		return 4
	}
	p := int64(math.Pow(10, math.Floor(math.Log10(float64(v)))))
	for _, m := range []int64{1, 2, 5, 10} {
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
