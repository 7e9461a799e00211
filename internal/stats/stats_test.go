package stats

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"ralph/internal/loop"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func rec(start string, mutate ...func(*loop.Metrics)) loop.Metrics {
	m := loop.Metrics{Loop: 1, StartedAt: at(start), DurationMS: 1000, Status: "IN_PROGRESS", Decision: "continue", Agent: "claude"}
	for _, f := range mutate {
		f(&m)
	}
	return m
}

func TestCompute(t *testing.T) {
	// UTC+10 all year: 14:30Z and later is the next day there.
	brisbane := time.FixedZone("AEST", 10*3600)
	tests := []struct {
		name string
		ms   []loop.Metrics
		loc  *time.Location
		want Report
	}{
		{
			name: "empty",
			want: Report{Days: []Day{}, Decisions: []Count{}, Exits: []Count{}, Statuses: []Count{}, Agents: []Count{}},
		},
		{
			name: "day boundary in a non-UTC zone",
			loc:  brisbane,
			ms: []loop.Metrics{
				rec("2026-11-20T13:59:59Z", func(m *loop.Metrics) { m.InputTokens, m.OutputTokens = 100, 10 }),
				rec("2026-11-20T14:00:00Z", func(m *loop.Metrics) { m.InputTokens, m.CacheReadTokens = 5, 7 }),
				rec("2026-11-20T23:00:00Z", func(m *loop.Metrics) {
					m.Failed, m.TimedOut, m.DurationMS, m.Status, m.Agent = true, true, 4000, "", ""
					m.Decision, m.CacheCreationTokens = "stop:circuit_breaker_open", 3
				}),
			},
			want: Report{
				Iterations: 3, Succeeded: 2, Failed: 1, TimedOut: 1, SuccessRate: 2.0 / 3,
				TotalDurationMS: 6000, AvgDurationMS: 2000,
				Totals: Usage{InputTokens: 105, OutputTokens: 10, CacheReadTokens: 7, CacheCreationTokens: 3},
				Days: []Day{
					{Date: "2026-11-20", Iterations: 1, Succeeded: 1, DurationMS: 1000, Usage: Usage{InputTokens: 100, OutputTokens: 10}},
					{Date: "2026-11-21", Iterations: 2, Succeeded: 1, Failed: 1, DurationMS: 5000, Usage: Usage{InputTokens: 5, CacheReadTokens: 7, CacheCreationTokens: 3}},
				},
				Decisions: []Count{{"continue", 2}, {"stop:circuit_breaker_open", 1}},
				Exits:     []Count{{"circuit_breaker_open", 1}},
				Statuses:  []Count{{"IN_PROGRESS", 2}, {"unknown", 1}},
				Agents:    []Count{{"claude", 2}, {"unknown", 1}},
				First:     at("2026-11-20T13:59:59Z"), Last: at("2026-11-20T23:00:00Z"),
			},
		},
		{
			name: "fractional costs sum without float drift; records out of order",
			ms: []loop.Metrics{
				rec("2026-11-21T10:00:00Z", func(m *loop.Metrics) { m.CostUSD = 0.2 }),
				rec("2026-11-20T10:00:00Z", func(m *loop.Metrics) { m.CostUSD, m.Decision = 0.1, "wait:usage_limit" }),
				rec("2026-11-21T11:00:00Z", func(m *loop.Metrics) {
					m.CostUSD, m.DurationMS, m.Decision, m.Status = 0.0024000000000000002, 1, "stop:project_complete", "COMPLETE"
				}),
			},
			want: Report{
				Iterations: 3, Succeeded: 3, SuccessRate: 1, TotalDurationMS: 2001, AvgDurationMS: 667,
				Totals: Usage{CostUSD: 0.3024},
				Days: []Day{
					{Date: "2026-11-20", Iterations: 1, Succeeded: 1, DurationMS: 1000, Usage: Usage{CostUSD: 0.1}},
					{Date: "2026-11-21", Iterations: 2, Succeeded: 2, DurationMS: 1001, Usage: Usage{CostUSD: 0.2024}},
				},
				Decisions: []Count{{"continue", 1}, {"stop:project_complete", 1}, {"wait:usage_limit", 1}},
				Exits:     []Count{{"project_complete", 1}},
				Statuses:  []Count{{"IN_PROGRESS", 2}, {"COMPLETE", 1}},
				Agents:    []Count{{"claude", 3}},
				First:     at("2026-11-20T10:00:00Z"), Last: at("2026-11-21T11:00:00Z"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.ms, tt.loc)
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(tt.want, "", " ")
				t.Errorf("got\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func TestSince(t *testing.T) {
	a := NewAccumulator(Options{Since: at("2026-11-21T00:00:00Z")})
	a.Add(rec("2026-11-20T23:59:59Z"))
	a.Add(rec("2026-11-21T00:00:00Z"))
	r := a.Report()
	if r.Iterations != 1 || !r.First.Equal(at("2026-11-21T00:00:00Z")) {
		t.Errorf("got %d iterations from %v", r.Iterations, r.First)
	}
}

func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "metrics.jsonl")
	good := `{"loop":1,"started_at":"2026-11-20T10:00:00Z","duration_ms":5,"cost_usd":0.1,"decision":"continue","status":"IN_PROGRESS","agent":"claude"}`
	lines := []string{
		good,
		`not json`,
		`{"loop":"two","started_at":"2026-11-20T10:00:00Z"}`,
		``,
		`{"loop":3}`,
		good,
		`{"loop":4,"started_at":"2026-11-20T10:00:00Z","cost_usd":-1}`,
		`{"loop":5,"started_at":"2026-11-20T1`, // torn: no newline
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadFile(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Iterations != 2 || r.Totals.CostUSD != 0.2 || r.Skipped != 5 {
		t.Errorf("iterations %d, cost %v, skipped %d", r.Iterations, r.Totals.CostUSD, r.Skipped)
	}
	wantAt := []string{p + ":2: ", p + ":3: ", p + ":5: skipped: no started_at", p + ":7: skipped: negative", p + ":8: skipped: torn last line"}
	if len(r.Warnings) != len(wantAt) {
		t.Fatalf("warnings %q", r.Warnings)
	}
	for i, w := range wantAt {
		if !strings.HasPrefix(r.Warnings[i], w) {
			t.Errorf("warning %d = %q, want prefix %q", i, r.Warnings[i], w)
		}
	}

	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWarningsBounded(t *testing.T) {
	a := NewAccumulator(Options{})
	for i := range 1000 {
		a.Skip("m.jsonl", i+1, errors.New("bad"))
	}
	r := a.Report()
	if r.Skipped != 1000 || len(r.Warnings) != maxWarnings+1 || r.Warnings[maxWarnings] != "and 980 more skipped lines" {
		t.Errorf("skipped %d, %d warnings, last %q", r.Skipped, len(r.Warnings), r.Warnings[len(r.Warnings)-1])
	}
}

func TestDecodeLineMatchesWriter(t *testing.T) {
	// A record as the loop writes it decodes to itself.
	m := rec("2026-11-20T10:00:00Z", func(m *loop.Metrics) {
		m.CostUSD, m.InputTokens, m.Summary, m.Breaker = 0.25, 9, "did it", "CLOSED"
	})
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeLine(b)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("got %+v, %v", got, err)
	}
}

// FuzzDecodeLine: never panics, and what it accepts is a record Add can
// count without breaking the report's invariants.
func FuzzDecodeLine(f *testing.F) {
	f.Add([]byte(`{"loop":1,"started_at":"2026-11-20T10:00:00Z","duration_ms":5,"cost_usd":0.1}`))
	f.Add([]byte(`{"started_at":"2026-11-20T10:00:00+02:00","cost_usd":1e300}`))
	f.Add([]byte(`{"started_at":null}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"started_at":"0001-01-01T00:00:00Z","input_tokens":-1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := DecodeLine(in)
		if err != nil {
			return
		}
		if m.StartedAt.IsZero() || m.CostUSD < 0 || m.CostUSD > maxCost || m.DurationMS < 0 {
			t.Fatalf("accepted %+v", m)
		}
		r := Compute([]loop.Metrics{m, m}, time.FixedZone("X", -9*3600))
		if r.Iterations != 2 || len(r.Days) != 1 || r.Succeeded+r.Failed != 2 || r.Totals.CostUSD < 0 {
			t.Fatalf("report %+v", r)
		}
	})
}
