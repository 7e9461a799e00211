package dashboard

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"ralph/internal/stats"
	"ralph/internal/store"
)

// statsData is `ralph stats` over the iterations the daemon keeps, for
// the whole fleet and by session, with small charts drawn on the server.
type statsData struct {
	page
	stats.Report
	Sessions []sessionStats
	Charts   []chart
	Error    string
}

type sessionStats struct {
	Name string
	stats.Report
}

// chart is a bar chart as SVG geometry; the page draws it and a table of
// the same numbers for those who do not see it.
type chart struct {
	ID, Title string
	Unit      string // what Max is in
	Max       string
	W, H      int
	Bars      []bar
	// Horizontal charts put one labelled bar per line; vertical ones
	// name their first and last column under the axis.
	Horizontal bool
	From, To   string
}

type bar struct {
	X, Y, W, H float64
	// Label is the category (a day, a session, a reason); Value the
	// number as shown; Part says which series the bar is ("bad": failed).
	Label, Value, Part     string
	LabelX, LabelY, ValueX float64
}

// round keeps the SVG's numbers short.
func round(f float64) float64 { return math.Round(f*10) / 10 }

func (d *Dashboard) statsPage(w http.ResponseWriter, r *http.Request) {
	data := statsData{}
	its, err := d.src.Iterations()
	if err != nil {
		data.Error = "The iterations could not be read: " + store.Redact(err.Error())
	}
	all := stats.NewAccumulator(stats.Options{})
	by := map[string]*stats.Accumulator{}
	for _, it := range its {
		all.Add(it.Metrics)
		a := by[it.Session]
		if a == nil {
			a = stats.NewAccumulator(stats.Options{})
			by[it.Session] = a
		}
		a.Add(it.Metrics)
	}
	data.Report = all.Report()
	for name, a := range by {
		data.Sessions = append(data.Sessions, sessionStats{Name: name, Report: a.Report()})
	}
	slices.SortFunc(data.Sessions, func(a, b sessionStats) int { return cmp.Compare(a.Name, b.Name) })
	data.Charts = charts(data.Report, data.Sessions)
	data.page = d.pageFor(r, "Statistics", "stats", "")
	d.render(w, http.StatusOK, "stats.html", data)
}

// Chart sizes, in the SVG's own units (it scales to the page's width).
const (
	chartW   = 600
	chartH   = 160
	rowH     = 22
	labelW   = 150
	maxBars  = 30 // days shown: the latest ones
	maxLines = 15 // sessions and reasons shown: the largest ones
)

func charts(r stats.Report, sessions []sessionStats) []chart {
	days := calendar(r.Days)
	var out []chart
	if len(days) > 0 {
		var ok, failed, cost, tok []float64
		var labels []string
		for _, d := range days {
			labels = append(labels, d.Date)
			ok, failed = append(ok, float64(d.Succeeded)), append(failed, float64(d.Failed))
			cost = append(cost, d.CostUSD)
			tok = append(tok, float64(d.InputTokens+d.OutputTokens))
		}
		out = append(out,
			columns("iterations-by-day", "Iterations by day (failed in red)", "iterations", labels, ok, failed, func(f float64) string { return fmt.Sprint(f) }),
			columns("cost-by-day", "Cost by day", "USD", labels, cost, nil, usd),
			columns("tokens-by-day", "Tokens by day (input and output)", "tokens", labels, tok, nil, func(f float64) string { return tokens(int64(f)) }))
	}
	ss := slices.Clone(sessions)
	slices.SortStableFunc(ss, func(a, b sessionStats) int { return cmp.Compare(b.Totals.CostUSD, a.Totals.CostUSD) })
	if len(ss) > 0 {
		var labels []string
		var cost, tok []float64
		for _, s := range ss[:min(len(ss), maxLines)] {
			labels = append(labels, s.Name)
			cost = append(cost, s.Totals.CostUSD)
			tok = append(tok, float64(s.Totals.InputTokens+s.Totals.OutputTokens))
		}
		out = append(out, lines("cost-by-session", "Cost by session", "USD", labels, cost, usd),
			lines("tokens-by-session", "Tokens by session", "tokens", labels, tok, func(f float64) string { return tokens(int64(f)) }))
	}
	if len(r.Exits) > 0 {
		var labels []string
		var n []float64
		for _, c := range r.Exits[:min(len(r.Exits), maxLines)] {
			labels = append(labels, c.Key)
			n = append(n, float64(c.Count))
		}
		out = append(out, lines("exits", "Exits by reason", "loops", labels, n, func(f float64) string { return fmt.Sprint(f) }))
	}
	return out
}

// minDays is the fewest days a chart by day spans: a single day is a
// narrow bar beside the days before it, not the chart's whole width.
const minDays = 7

// calendar is days as consecutive calendar days, one each (a day without
// iterations is a zero), ending on the last and spanning at least minDays
// and at most maxBars: a chart by day draws one bar per day, and a gap
// between busy days shows as one.
func calendar(days []stats.Day) []stats.Day {
	if len(days) == 0 {
		return nil
	}
	last, err := time.Parse(stats.DayLayout, days[len(days)-1].Date)
	if err != nil {
		return days
	}
	first, err := time.Parse(stats.DayLayout, days[0].Date)
	if err != nil {
		return days
	}
	n := int(last.Sub(first).Hours()/24) + 1
	n = min(max(n, minDays), maxBars)
	have := map[string]stats.Day{}
	for _, d := range days {
		have[d.Date] = d
	}
	out := make([]stats.Day, 0, n)
	for i := n - 1; i >= 0; i-- {
		date := last.AddDate(0, 0, -i).Format(stats.DayLayout)
		d, ok := have[date]
		if !ok {
			d = stats.Day{Date: date}
		}
		out = append(out, d)
	}
	return out
}

// columns is a vertical bar chart; second, when set, stacks on first.
func columns(id, title, unit string, labels []string, first, second []float64, show func(float64) string) chart {
	top := 0.0
	for i := range first {
		v := first[i]
		if second != nil {
			v += second[i]
		}
		top = max(top, v)
	}
	top = niceMax(top)
	c := chart{ID: id, Title: title, Unit: unit, Max: show(top), W: chartW, H: chartH + 20}
	slot := float64(chartW) / float64(len(first))
	w := max(slot*0.7, 1)
	for i, v := range first {
		x := round(float64(i)*slot + (slot-w)/2)
		h := round(v / top * chartH)
		val := show(v)
		if second != nil {
			val += " succeeded"
		}
		c.Bars = append(c.Bars, bar{X: x, Y: chartH - h, W: round(w), H: h, Label: labels[i], Value: val, Part: "ok"})
		if second != nil && second[i] > 0 {
			h2 := round(second[i] / top * chartH)
			c.Bars = append(c.Bars, bar{X: x, Y: chartH - h - h2, W: round(w), H: h2, Label: labels[i], Value: show(second[i]) + " failed", Part: "bad"})
		}
	}
	c.From, c.To = labels[0], labels[len(labels)-1]
	return c
}

// lines is a horizontal bar chart, one labelled line per value.
func lines(id, title, unit string, labels []string, values []float64, show func(float64) string) chart {
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	top = niceMax(top)
	c := chart{ID: id, Title: title, Unit: unit, Max: show(top), W: chartW, H: rowH * len(values), Horizontal: true}
	span := float64(chartW - labelW - 70)
	for i, v := range values {
		y := float64(i * rowH)
		w := round(max(v/top*span, 1))
		c.Bars = append(c.Bars, bar{X: labelW, Y: y + 3, W: w, H: rowH - 6, Label: labels[i], Value: show(v),
			Part: "ok", LabelX: labelW - 6, LabelY: y + rowH/2 + 4, ValueX: labelW + w + 6})
	}
	return c
}
