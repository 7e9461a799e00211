// Package stats sums up what the loop's iterations did and cost, from the
// records of logs/metrics.jsonl: counts, success rate, durations, tokens and
// cost by calendar day and in total, and how often each decision, status
// and agent occurred.
//
// Everything but ReadFile is pure: the time zone of the days and the
// earliest time to count come in as options.
package stats

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"ralph/internal/loop"
)

// DayLayout is how Day.Date is written.
const DayLayout = "2006-01-02"

// maxWarnings bounds the warnings a Report keeps, so a file of garbage
// cannot make the report grow with it; the rest are only counted.
const maxWarnings = 20

// maxCost is more than any one agent call costs; it also keeps the nanoUSD
// sums of millions of records far from overflowing.
const maxCost = 1e6

// Report is what `ralph stats --json` prints; its field names are a stable
// contract for scripts.
type Report struct {
	Iterations int `json:"iterations"`
	Succeeded  int `json:"succeeded"` // iterations the loop did not count as failed
	Failed     int `json:"failed"`
	TimedOut   int `json:"timed_out"`
	// SuccessRate is Succeeded/Iterations, from 0 to 1; 0 with no iterations.
	SuccessRate     float64 `json:"success_rate"`
	TotalDurationMS int64   `json:"total_duration_ms"`
	AvgDurationMS   int64   `json:"average_duration_ms"`
	Totals          Usage   `json:"totals"`
	// Days are calendar days in the report's time zone, oldest first; days
	// without iterations are left out.
	Days []Day `json:"days"`
	// Decisions counts the decision field as written: "continue",
	// "stop:<reason>", "wait:usage_limit". Exits counts the reasons of the
	// stop decisions alone. Every Count list is most frequent first.
	Decisions []Count `json:"decisions"`
	Exits     []Count `json:"exits"`
	Statuses  []Count `json:"statuses"`
	Agents    []Count `json:"agents"`
	// First and Last are the start times of the earliest and latest
	// iterations counted.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// Warnings name the lines that were skipped, as "file:line: why".
	Warnings []string `json:"warnings,omitempty"`
	// Skipped counts every skipped line, also those beyond the warnings kept.
	Skipped int `json:"skipped_lines"`
}

// Usage is tokens and cost.
type Usage struct {
	InputTokens         int64   `json:"input_tokens"`
	OutputTokens        int64   `json:"output_tokens"`
	CacheReadTokens     int64   `json:"cache_read_input_tokens"`
	CacheCreationTokens int64   `json:"cache_creation_input_tokens"`
	CostUSD             float64 `json:"cost_usd"`
}

// Day is one calendar day's share of the report.
type Day struct {
	Date       string `json:"date"` // DayLayout, in the report's time zone
	Iterations int    `json:"iterations"`
	Succeeded  int    `json:"succeeded"`
	Failed     int    `json:"failed"`
	DurationMS int64  `json:"duration_ms"`
	Usage
}

// Count is how often one value occurred.
type Count struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// Options place and select records.
type Options struct {
	// Loc is the time zone whose calendar days the report uses; nil: UTC.
	Loc *time.Location
	// Since leaves out iterations that started before it; zero: none.
	Since time.Time
}

// Compute sums up ms, with days in loc (nil: UTC).
func Compute(ms []loop.Metrics, loc *time.Location) Report {
	a := NewAccumulator(Options{Loc: loc})
	for _, m := range ms {
		a.Add(m)
	}
	return a.Report()
}

// Accumulator builds a Report one record at a time; its memory depends on
// the number of days and distinct values, not on the number of records.
type Accumulator struct {
	opt       Options
	r         Report
	days      map[string]*dayTotals
	total     nanoUSD
	decisions map[string]int
	exits     map[string]int
	statuses  map[string]int
	agents    map[string]int
	skipped   []skip
}

type dayTotals struct {
	Day
	cost nanoUSD
}

// nanoUSD sums costs in billionths of a dollar: float sums drift (0.1+0.2
// is not 0.3), and a report that disagrees with the records in the ninth
// decimal looks wrong in a table and in JSON.
type nanoUSD int64

func toNano(usd float64) nanoUSD { return nanoUSD(math.Round(usd * 1e9)) }
func (n nanoUSD) USD() float64   { return float64(n) / 1e9 }

// add sums the tokens; costs are summed apart, as nanoUSD.
func (u *Usage) add(m loop.Metrics) {
	u.InputTokens += m.InputTokens
	u.OutputTokens += m.OutputTokens
	u.CacheReadTokens += m.CacheReadTokens
	u.CacheCreationTokens += m.CacheCreationTokens
}

// NewAccumulator starts an empty report.
func NewAccumulator(opt Options) *Accumulator {
	if opt.Loc == nil {
		opt.Loc = time.UTC
	}
	return &Accumulator{
		opt: opt, days: map[string]*dayTotals{},
		decisions: map[string]int{}, exits: map[string]int{}, statuses: map[string]int{}, agents: map[string]int{},
	}
}

// Add counts one iteration, unless it started before Options.Since.
func (a *Accumulator) Add(m loop.Metrics) {
	if !a.opt.Since.IsZero() && m.StartedAt.Before(a.opt.Since) {
		return
	}
	r := &a.r
	r.Iterations++
	if r.First.IsZero() || m.StartedAt.Before(r.First) {
		r.First = m.StartedAt
	}
	if m.StartedAt.After(r.Last) {
		r.Last = m.StartedAt
	}
	date := m.StartedAt.In(a.opt.Loc).Format(DayLayout)
	d := a.days[date]
	if d == nil {
		d = &dayTotals{Day: Day{Date: date}}
		a.days[date] = d
	}
	d.Iterations++
	if m.Failed {
		r.Failed++
		d.Failed++
	} else {
		r.Succeeded++
		d.Succeeded++
	}
	if m.TimedOut {
		r.TimedOut++
	}
	r.TotalDurationMS += m.DurationMS
	d.DurationMS += m.DurationMS
	r.Totals.add(m)
	d.Usage.add(m)
	cost := toNano(m.CostUSD)
	a.total += cost
	d.cost += cost
	a.decisions[orUnknown(m.Decision)]++
	if reason, ok := strings.CutPrefix(m.Decision, "stop:"); ok {
		a.exits[orUnknown(reason)]++
	}
	a.statuses[orUnknown(m.Status)]++
	a.agents[orUnknown(m.Agent)]++
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Skip records a line of file that could not be counted.
func (a *Accumulator) Skip(file string, line int, why error) {
	a.r.Skipped++
	if len(a.skipped) < maxWarnings {
		a.skipped = append(a.skipped, skip{line, fmt.Sprintf("%s:%d: skipped: %v", file, line, why)})
	}
}

type skip struct {
	line int
	msg  string
}

// Report returns the report of what was added so far.
func (a *Accumulator) Report() Report {
	r := a.r
	// Lines skipped while decoding and lines the reader set aside arrive
	// apart; people read warnings in file order.
	slices.SortStableFunc(a.skipped, func(x, y skip) int { return cmp.Compare(x.line, y.line) })
	for _, s := range a.skipped {
		r.Warnings = append(r.Warnings, s.msg)
	}
	if n := r.Skipped - len(r.Warnings); n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("and %d more skipped lines", n))
	}
	if r.Iterations > 0 {
		r.SuccessRate = float64(r.Succeeded) / float64(r.Iterations)
		r.AvgDurationMS = int64(math.Round(float64(r.TotalDurationMS) / float64(r.Iterations)))
	}
	r.Totals.CostUSD = a.total.USD()
	r.Days = make([]Day, 0, len(a.days))
	for _, d := range a.days {
		day := d.Day
		day.CostUSD = d.cost.USD()
		r.Days = append(r.Days, day)
	}
	slices.SortFunc(r.Days, func(x, y Day) int { return strings.Compare(x.Date, y.Date) })
	r.Decisions, r.Exits = counts(a.decisions), counts(a.exits)
	r.Statuses, r.Agents = counts(a.statuses), counts(a.agents)
	return r
}

func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		out = append(out, Count{Key: k, Count: n})
	}
	slices.SortFunc(out, func(x, y Count) int { return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Key, y.Key)) })
	return out
}

// DecodeLine decodes one metrics record. A line that is valid JSON but not
// a record ralph could have written (no start time, negative amounts) is an
// error too: counting it would only skew the report.
func DecodeLine(b []byte) (loop.Metrics, error) {
	var m loop.Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		return loop.Metrics{}, err
	}
	switch {
	case m.StartedAt.IsZero():
		return loop.Metrics{}, errors.New("no started_at")
	case m.DurationMS < 0 || m.InputTokens < 0 || m.OutputTokens < 0 || m.CacheReadTokens < 0 ||
		m.CacheCreationTokens < 0 || m.CostUSD < 0:
		return loop.Metrics{}, errors.New("negative duration, tokens or cost")
	case m.CostUSD > maxCost:
		return loop.Metrics{}, errors.New("implausible cost")
	}
	return m, nil
}
