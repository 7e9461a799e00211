package cli

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"ralph/internal/gate"
	"ralph/internal/monitor"
)

func TestGateWanted(t *testing.T) {
	env := func(ci string) func(string) string { return func(string) string { return ci } }
	for _, tc := range []struct {
		name                     string
		monitor, noGate, stdinTT bool
		ci                       string
		want                     bool
	}{
		{"the dashboard in a terminal", true, false, true, "", true},
		{"CI=false is no CI", true, false, true, "false", true},
		{"no dashboard", false, false, true, "", false},
		{"--no-gate", true, true, true, "", false},
		{"stdin is no terminal", true, false, false, "", false},
		{"in CI", true, false, true, "true", false},
	} {
		if got := gateWanted(tc.monitor, tc.noGate, tc.stdinTT, env(tc.ci)); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

// "Allow for this run" lets the exact call run unasked afterwards, and is
// recorded; another command still asks.
func TestTermGateAllowForRun(t *testing.T) {
	shown := make(chan []monitor.Prompt, 16)
	g := newTermGate(func(p []monitor.Prompt) { shown <- p })
	g.user = "alice"
	bash := func(cmd string) gate.Approval {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return gate.Approval{Tool: "Bash", Input: in}
	}
	ctx := context.Background()
	decided := make(chan gate.Decision, 1)
	go func() { d, _ := g.Approve(ctx, bash("npm test")); decided <- d }()
	if p := <-shown; len(p) != 1 || p[0].ID != "a1" || p[0].What != "Bash(npm test)" {
		t.Fatalf("shown %+v", p)
	}
	if err := g.Decide("a1", true, true); err != nil {
		t.Fatal(err)
	}
	if d := <-decided; !d.Allow {
		t.Fatalf("decision %+v", d)
	}
	if d, err := g.Approve(ctx, bash("npm test")); err != nil || !d.Allow {
		t.Fatalf("the same command asked again: %+v %v", d, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if d, err := g.Approve(short, bash("npm test --force")); err == nil || d.Allow {
		t.Fatalf("another command ran unasked: %+v", d)
	}
	got := g.take()
	if len(got) != 3 || got[0].Outcome != "allowed for this run" || got[0].Surface != "terminal" || got[0].User != "alice" ||
		got[1].Outcome != "allowed (for this run, earlier)" || got[2].Outcome != "denied (no decision in time)" {
		t.Errorf("recorded %+v", got)
	}
	if err := g.Decide("a9", true, false); err == nil {
		t.Error("deciding an item nobody waits on")
	}
}

// Once the dashboard is gone, what waits is denied at once and later calls
// are told nobody is there (the gate's own message), instead of waiting
// out APPROVAL_TIMEOUT.
func TestTermGateClosed(t *testing.T) {
	shown := make(chan []monitor.Prompt, 16)
	g := newTermGate(func(p []monitor.Prompt) { shown <- p })
	ctx := context.Background()
	errs := make(chan error, 1)
	go func() {
		_, err := g.Approve(ctx, gate.Approval{Tool: "Write", Input: json.RawMessage(`{"file_path":"x"}`)})
		errs <- err
	}()
	<-shown
	g.Close()
	if err := <-errs; err != gate.ErrNobody {
		t.Fatalf("the waiting call: %v", err)
	}
	if _, err := g.Ask(ctx, gate.Question{Text: "Which?"}); err != gate.ErrNobody {
		t.Errorf("a later question: %v", err)
	}
	if got := g.take(); len(got) != 1 || got[0].Outcome != "denied (the dashboard was closed)" {
		t.Errorf("recorded %+v", got)
	}
}
