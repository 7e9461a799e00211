package loop

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/stop"
)

// randomIteration draws one call's outcome from the situations a loop meets:
// progress, idling, errors, denials, usage limits, questions, completion.
func randomIteration(r *rand.Rand, n int, at time.Time) Iteration {
	it := Iteration{Loop: n, Agent: []string{"claude", "codex"}[r.IntN(2)], Started: at.Add(-time.Minute), Ended: at,
		InRepo: r.IntN(5) > 0, Plan: stop.Plan{Known: true, Total: 5, Open: r.IntN(6), NextOpen: "task"}}
	o := Observed{Status: analyze.StatusInProgress, FilesModified: r.IntN(3) - 1, OutputBytes: int64(r.IntN(20000)),
		SessionID: fmt.Sprintf("s%d", r.IntN(3)), Summary: fmt.Sprintf("did %d", n),
		Usage: analyze.Usage{InputTokens: int64(r.IntN(5000)), OutputTokens: int64(r.IntN(500)), CostUSD: float64(r.IntN(100)) / 100}}
	switch r.IntN(10) {
	case 0:
		o.IsError, it.ExitCode = true, 1
		o.Errors = []string{fmt.Sprintf("Error: boom %d", r.IntN(2))}
	case 1:
		o.PermissionDenials = []analyze.Denial{{Tool: "Bash", Command: "rm -rf /"}}
	case 2:
		o.UsageLimit = analyze.UsageLimit{Detected: true, Kind: "five_hour", ResetsAt: at.Add(time.Duration(r.IntN(120)) * time.Minute).Format(time.RFC3339), Message: "limit"}
	case 3:
		o.AskingQuestions = true
	case 4:
		o.ExitSignalExplicit, o.ExitSignal = true, r.IntN(2) == 0
		o.CompletionIndicators = r.IntN(3)
	case 5:
		o.Status, o.HasCompletionSignal = analyze.StatusComplete, true
	case 6:
		o.IsTestOnly, o.TestsStatus = true, analyze.TestsPassing
	case 7:
		it.TimedOut, it.ExitCode = true, 124
	}
	it.Changed = r.IntN(3) == 0
	it.PlanGain = r.IntN(2)
	it.CumulativeCost = it.Agent == "claude"
	it.Observed = o
	return it
}

func roundTrip(t *testing.T, st State) State {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(back); string(b2) != string(b) {
		t.Fatalf("state changed in a JSON round trip:\n%s\n%s", b, b2)
	}
	return back
}

// The fields that once fell out of the document survive: a HALF_OPEN
// breaker with its strikes, the recorded calls, the output sizes the
// decline rule compares.
func TestStateRoundTripKeepsWhatWasLost(t *testing.T) {
	p := policy()
	st, _ := Begin(State{}, t0, p)
	idle := Iteration{InRepo: true, Plan: openPlan, Observed: an(nil)}
	for n := 1; n <= 2; n++ {
		it := idle
		it.Loop, it.Ended = n, t0.Add(time.Duration(n)*time.Minute)
		st, _ = Fold(st, it, p)
	}
	st.Breaker.Status = "HALF_OPEN"
	back := roundTrip(t, st)
	if !reflect.DeepEqual(back.Breaker, st.Breaker) || back.Breaker.NoProgress != 2 || len(back.Breaker.OutputSizes) != 2 {
		t.Errorf("breaker after a round trip: %+v", back.Breaker)
	}
	if len(back.Calls.Calls) != 2 || !reflect.DeepEqual(back.Calls, st.Calls) {
		t.Errorf("calls after a round trip: %+v", back.Calls)
	}
	var it Iteration
	b, _ := json.Marshal(Iteration{Loop: 3, StartErr: "exec: not found", Observed: Observed{OutputBytes: 1234}})
	if err := json.Unmarshal(b, &it); err != nil || it.StartErr == "" || it.Observed.OutputBytes != 1234 {
		t.Errorf("iteration after a round trip: %+v %v", it, err)
	}
}

// Every state of long random runs survives a JSON round trip exactly, and
// the round-tripped state decides exactly as the original: a loop killed
// and restarted from its document, or moved to another worker, goes on as
// if nothing happened.
func TestStateRoundTripsAtEveryStep(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		p := policy()
		p.Agents = []string{"claude", "codex"}
		p.FailureBackoff = 30 * time.Second
		p.Delay = time.Duration(r.IntN(3)) * time.Second
		p.Limits.MaxCallsPerHour = 5 + r.IntN(20)
		st, _ := Begin(State{}, t0, p)
		at := t0
		for n := 1; n <= 150; n++ {
			st = roundTrip(t, st)
			obs := Observation{Now: at, Plan: stop.Plan{Known: true, Total: 5, Open: 1 + r.IntN(5)}}
			if r.IntN(20) == 0 {
				obs.Control.ResetID = fmt.Sprintf("r%d", n)
			}
			a, stepA := Next(st, obs, p)
			b, stepB := Next(roundTrip(t, st), obs, p)
			if mustJSON(t, stepA) != mustJSON(t, stepB) || mustJSON(t, a) != mustJSON(t, b) {
				t.Fatalf("seed %d step %d: Next differs after a round trip", seed, n)
			}
			st = a
			switch stepA.Kind {
			case Stop:
				// Start a new run from the same document, as a restart would.
				if stepA.Reason == "circuit_breaker_open" {
					st.Breaker, _ = st.Breaker.Reset(at, "test")
				}
				st, _ = Begin(roundTrip(t, st), at, p)
				continue
			case Wait:
				if stepA.Until.IsZero() || !stepA.Until.After(at) {
					t.Fatalf("seed %d step %d: a wait that does not move time: %+v", seed, n, stepA)
				}
				at = stepA.Until
				continue
			}
			at = at.Add(time.Duration(1+r.IntN(10)) * time.Minute)
			it := randomIteration(r, st.Loop+1, at)
			it.Agent = p.Agents[stepA.Agent]
			fa, da := Fold(st, it, p)
			fb, db := Fold(roundTrip(t, st), it, p)
			if mustJSON(t, fa) != mustJSON(t, fb) || mustJSON(t, da) != mustJSON(t, db) {
				t.Fatalf("seed %d step %d: Fold differs after a round trip", seed, n)
			}
			st = fa
		}
	}
}
