package replay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"ralph/internal/loop"
	"ralph/internal/reason"
)

func TestDiff(t *testing.T) {
	tests := []struct{ recorded, today, want string }{
		{"continue", "continue", ""},
		{"call:claude", "call:claude", ""},
		{"continue", "stop:circuit_breaker_open", "kind, reason"},
		{"stop:max_loops", "stop:max_cost", "reason"},
		{"call:claude", "call:codex", "agent"},
		{"wait:delay", "wait:backoff", "wait"},
		{"call:claude", "wait:rate_limit", "kind, reason"},
		{"verify:project_complete", "stop:project_complete", "kind"},
		{"continue", "wait:usage_limit", "kind, reason"},
		{"stop:verify_failed", None, "kind, reason"},
	}
	for _, tt := range tests {
		if got := Diff(tt.recorded, tt.today); got != tt.want {
			t.Errorf("Diff(%q, %q) = %q, want %q", tt.recorded, tt.today, got, tt.want)
		}
	}
}

func TestPrint(t *testing.T) {
	tests := []struct {
		name string
		rep  Report
		want []string // lines, spaces squeezed
	}{
		{"one file: its name once, rows by line",
			Report{Rows: []Row{
				{Where: "m.jsonl:1", Loop: 1, Step: StepNext, Recorded: "call:claude", Today: "call:claude"},
				{Where: "m.jsonl:1", Loop: 1, Step: StepFold, Recorded: "continue", Today: "stop:circuit_breaker_open", Message: "no progress in 1 loop\n(x)"},
			}, Replayed: 2, Differ: 1},
			[]string{"m.jsonl", "LINE LOOP STEP RECORDED TODAY", "1 1 next call:claude call:claude",
				"1 1 fold continue stop:circuit_breaker_open ≠ kind, reason: no progress in 1 loop (x)", "2 decisions replayed, 1 differ"}},
		{"a task's rows, one not replayable",
			Report{Rows: []Row{
				{Where: "t3#4", Loop: 4, Skipped: "not replayable: old"},
				{Where: "t3#5", Loop: 5, Step: StepVerify, Recorded: "stop:project_complete", Today: "stop:project_complete"},
			}, Replayed: 1, Skipped: 1},
			[]string{"WHERE LOOP STEP RECORDED TODAY", "t3#4 4 - not replayable: old", "t3#5 5 verify stop:project_complete stop:project_complete",
				"1 decision replayed, 0 differ; 1 record not replayable"}},
		{"a recorded string cannot move the terminal",
			Report{Rows: []Row{{Where: "t1#1", Loop: 1, Step: StepFold, Recorded: "stop:x\x1b[2J", Today: "continue"}}, Replayed: 1, Differ: 1},
			[]string{"WHERE LOOP STEP RECORDED TODAY", "t1#1 1 fold stop:x[2J continue ≠ kind, reason", "1 decision replayed, 1 differ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Print(&b, tt.rep); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
				got = append(got, strings.Join(strings.Fields(l), " "))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// record is an iteration record whose Fold answers what Fold answers
// today: an iteration without progress, the breaker closed.
func record(t *testing.T, mutate func(*loop.Metrics)) string {
	t.Helper()
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	p := loop.Policy{Agents: []string{"claude"}}
	p.Breaker.NoProgress = 3
	st, _ := loop.Begin(loop.State{}, now, p)
	obs := loop.Observation{Now: now}
	st1, step := loop.Next(st, obs, p)
	it := loop.Iteration{Loop: 1, Agent: "claude", Started: now, Ended: now.Add(time.Minute), Observed: loop.Observed{Status: "IN_PROGRESS"}}
	st2, d := loop.Fold(st1, it, p)
	m := loop.Record(it, d, st2)
	m.Replay = &loop.Replay{V: loop.ReplayVersion, Policy: p, Before: st, Observation: obs, Iteration: it,
		Next: loop.StepLabel(step, p), Fold: d.Label()}
	if mutate != nil {
		mutate(&m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRead(t *testing.T) {
	good := record(t, nil)
	tests := []struct {
		name    string
		text    string
		records int
		trace   int
		notes   int
		err     string
	}{
		{"records", good + "\n\n" + good + "\n", 2, 0, 0, ""},
		{"a trace", `{"begin":{"version":3},"policy":{}}` + "\n" + `{"next":{"observation":{},"step":{"Kind":1}}}` + "\n", 0, 2, 0, ""},
		{"a torn last line is passed over", good + "\n" + good[:40], 1, 0, 1, ""},
		{"a bad line in the middle names its line", good + "\n{nope\n" + good + "\n", 0, 0, 0, "m.jsonl:2: not a JSON record"},
		{"neither kind", `{"hello":1}` + "\n", 0, 0, 0, "m.jsonl:1: neither an iteration record"},
		{"kinds mixed", good + "\n" + `{"fold":{}}` + "\n", 0, 0, 0, "m.jsonl:2: a trace line in a file of records"},
		{"a record's state before is checked", record(t, func(m *loop.Metrics) { m.Replay.Before.Loop = -4 }) + "\n", 0, 0, 0,
			"m.jsonl:1: bad replay inputs: the state before the call: loop count -4"},
		{"a trace's start is checked", `{"begin":{"version":99},"policy":{}}` + "\n", 0, 0, 0, "m.jsonl:1: bad state: unknown state version 99"},
		{"a record of a wrong shape", `{"loop":"one"}` + "\n", 0, 0, 0, "m.jsonl:1: bad iteration record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := Read("m.jsonl", strings.NewReader(tt.text))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Records) != tt.records || len(rec.Trace) != tt.trace || len(rec.Notes) != tt.notes {
				t.Errorf("%d records, %d trace lines, notes %v", len(rec.Records), len(rec.Trace), rec.Notes)
			}
		})
	}
}

func TestRecords(t *testing.T) {
	read := func(line string) []Record {
		rec, err := Read("m.jsonl", strings.NewReader(line+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return rec.Records
	}
	breakerAtOne := Today()
	breakerAtOne.Fold = func(st loop.State, it loop.Iteration, p loop.Policy) (loop.State, loop.Decision) {
		p.Breaker.NoProgress = 1
		return loop.Fold(st, it, p)
	}
	claimsDone := Today()
	claimsDone.Fold = func(st loop.State, it loop.Iteration, p loop.Policy) (loop.State, loop.Decision) {
		st, d := loop.Fold(st, it, p)
		return st, loop.Decision{Kind: loop.Check, Reason: reason.ProjectComplete, Message: d.Message}
	}
	verified := func(m *loop.Metrics) {
		m.Verify = &loop.VerifyRun{Command: "make test", ExitCode: 0}
		m.Replay.Policy.Verify.On = true
		m.Decision = "stop:project_complete"
	}
	tests := []struct {
		name     string
		line     string
		rules    Rules
		want     []string // step recorded→today
		exitCode int
	}{
		{"agrees today", record(t, nil), Today(), []string{"next call:claude→call:claude", "fold continue→continue"}, 0},
		{"a changed threshold", record(t, nil), breakerAtOne,
			[]string{"next call:claude→call:claude", "fold continue→stop:circuit_breaker_open"}, ExitDiffers},
		{"a check recorded, today none", record(t, verified), Today(),
			[]string{"next call:claude→call:claude", "fold continue→continue", "verify stop:project_complete→-"}, ExitDiffers},
		{"a check recorded and made again", record(t, verified), claimsDone,
			[]string{"next call:claude→call:claude", "fold continue→verify:project_complete", "verify stop:project_complete→stop:project_complete"}, ExitDiffers},
		{"before replay inputs were kept", record(t, func(m *loop.Metrics) { m.Replay = nil }), Today(),
			[]string{"not replayable: no inputs kept (recorded before ralph kept them, or read by the watchdog from a tmux pane)"}, ExitNothing},
		{"a newer version", record(t, func(m *loop.Metrics) { m.Replay.V = loop.ReplayVersion + 1 }), Today(),
			[]string{"not replayable: recorded by a newer ralph (replay version 2; this one reads up to 1)"}, ExitNothing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Records(read(tt.line), tt.rules)
			var got []string
			for _, r := range rep.Rows {
				if r.Skipped != "" {
					got = append(got, r.Skipped)
					continue
				}
				got = append(got, r.Step+" "+r.Recorded+"→"+r.Today)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if rep.ExitCode() != tt.exitCode {
				t.Errorf("exit %d, want %d (%s)", rep.ExitCode(), tt.exitCode, Summary(rep))
			}
		})
	}
}

func TestTracesNeedTheirStart(t *testing.T) {
	_, err := Traces([]TraceLine{{Where: "t.jsonl:1", Trace: loop.Trace{Fold: &loop.TraceFold{}}}}, Today())
	if err == nil || !strings.Contains(err.Error(), "t.jsonl:1: a decision before the run began") {
		t.Errorf("err %v", err)
	}
}
