package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/loop"
	"ralph/internal/reason"
)

// The corpus is what the test runs recorded: the iteration records of the
// script tests (`go test ./internal/cli -run TestScripts -update-records`)
// and the decision traces of the script and real-CLI runs kept for the
// loop's own replay test (-update-replay). Replayed in CI, a change to a
// rule shows here as the past decisions it would change.
func corpus(t *testing.T) (records map[string][]Record, traces map[string][]TraceLine) {
	t.Helper()
	records, traces = map[string][]Record{}, map[string][]TraceLine{}
	files, _ := filepath.Glob("testdata/corpus/*.jsonl")
	more, _ := filepath.Glob("../loop/testdata/replay/*.jsonl")
	if len(files) < 20 || len(more) < 20 {
		t.Fatalf("%d recorded runs with records, %d traces; record them again (see the comment)", len(files), len(more))
	}
	for _, file := range append(files, more...) {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := Read(filepath.Base(file), f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Notes) > 0 {
			t.Errorf("%s: %v", file, rec.Notes)
		}
		switch {
		case len(rec.Records) > 0:
			records[file] = rec.Records
		case len(rec.Trace) > 0:
			traces[file] = rec.Trace
		default:
			t.Errorf("%s: nothing recorded", file)
		}
	}
	return records, traces
}

// replayAll replays the whole corpus with rules.
func replayAll(t *testing.T, rules Rules) Report {
	t.Helper()
	records, traces := corpus(t)
	var all Report
	merge := func(rep Report) {
		all.Rows = append(all.Rows, rep.Rows...)
		all.Replayed += rep.Replayed
		all.Differ += rep.Differ
		all.Skipped += rep.Skipped
	}
	for _, recs := range records {
		merge(Records(recs, rules))
	}
	for file, lines := range traces {
		rep, err := Traces(lines, rules)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		merge(rep)
	}
	return all
}

func TestCorpusAgreesWithTodaysRules(t *testing.T) {
	rep := replayAll(t, Today())
	for _, r := range rep.Rows {
		if r.Skipped != "" {
			t.Errorf("%s: %s", r.Where, r.Skipped)
		} else if d := r.Diff(); d != "" {
			t.Errorf("%s loop %d %s: recorded %s, today %s (%s): %s", r.Where, r.Loop, r.Step, r.Recorded, r.Today, d, r.Message)
		}
	}
	if rep.Replayed < 200 || rep.ExitCode() != 0 {
		t.Errorf("%s; exit %d", Summary(rep), rep.ExitCode())
	}
	// Every kind of decision is in the corpus, so a change to any rule
	// meets a recorded decision it touches.
	seen := map[string]bool{}
	for _, r := range rep.Rows {
		seen[r.Recorded] = true
	}
	for _, want := range []string{"call:claude", "call:codex", "continue", "wait:usage_limit", "wait:paused",
		"verify:project_complete", "stop:" + string(reason.BreakerOpen), "stop:" + string(reason.MaxLoops),
		"stop:" + string(reason.ProjectComplete), "stop:" + string(reason.NeedsClarification), "stop:" + string(reason.VerifyFailed),
		"stop:" + string(reason.PermissionDenied), "stop:" + string(reason.Interrupted)} {
		if !seen[want] {
			t.Errorf("no recorded %s decision in the corpus", want)
		}
	}
}

// A rule changed on purpose — the breaker opening after one iteration
// without progress instead of three — shows as exactly the recorded
// decisions it would have changed: iterations that went on without
// progress now stop there.
func TestCorpusShowsARuleChange(t *testing.T) {
	impatient := Today()
	impatient.Fold = func(st loop.State, it loop.Iteration, p loop.Policy) (loop.State, loop.Decision) {
		p.Breaker.NoProgress = 1
		return loop.Fold(st, it, p)
	}
	rep := replayAll(t, impatient)
	if rep.Differ == 0 || rep.ExitCode() != ExitDiffers {
		t.Fatalf("%s; exit %d, want %d", Summary(rep), rep.ExitCode(), ExitDiffers)
	}
	breakerRecords := 0
	for _, r := range rep.Rows {
		if r.Diff() == "" || !strings.HasPrefix(r.Where, "script_run_breaker_proj.jsonl:") {
			continue
		}
		breakerRecords++
		if r.Step != StepFold || r.Recorded != "continue" || r.Today != "stop:"+string(reason.BreakerOpen) || r.Diff() != "kind, reason" ||
			!strings.Contains(r.Message, "no progress") {
			t.Errorf("%s: %s recorded %s, today %s (%s): %s", r.Where, r.Step, r.Recorded, r.Today, r.Diff(), r.Message)
		}
	}
	if breakerRecords == 0 {
		t.Errorf("the breaker script's records show no changed decision:\n%s", summaryOf(rep))
	}
}

// A budget tightened on Next's side — one iteration per run — is caught on
// the records' own Next decisions: the second call of a run is a stop now.
func TestCorpusShowsAChangedNext(t *testing.T) {
	rules := Today()
	rules.Next = func(st loop.State, obs loop.Observation, p loop.Policy) (loop.State, loop.Step) {
		p.Budget.MaxLoops = 1
		return loop.Next(st, obs, p)
	}
	rep := replayAll(t, rules)
	n := 0
	for _, r := range rep.Rows {
		if r.Diff() != "" && r.Step == StepNext && strings.HasPrefix(r.Where, "script_run_complete_proj.jsonl:") {
			n++
			if r.Where != "script_run_complete_proj.jsonl:2" || r.Recorded != "call:claude" || r.Today != "stop:"+string(reason.MaxLoops) {
				t.Errorf("%s: recorded %s, today %s", r.Where, r.Recorded, r.Today)
			}
		}
	}
	if n != 1 || rep.ExitCode() != ExitDiffers {
		t.Errorf("%d changed Next decisions in run_complete, want 1; exit %d\n%s", n, rep.ExitCode(), summaryOf(rep))
	}
}

func summaryOf(rep Report) string {
	var b strings.Builder
	_ = Print(&b, rep)
	return b.String()
}
