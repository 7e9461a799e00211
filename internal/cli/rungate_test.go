package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"ralph/internal/gate"
	"ralph/internal/monitor"
)

func TestGateWanted(t *testing.T) {
	env := func(ci string) func(string) string { return func(string) string { return ci } }
	for _, tc := range []struct {
		name                   string
		shown, noGate, stdinTT bool
		ci                     string
		want                   bool
	}{
		{"a terminal", true, false, true, "", true},
		{"CI=false is no CI", true, false, true, "false", true},
		{"nothing shown at a terminal (--json, a pipe)", false, false, true, "", false},
		{"--no-gate", true, true, true, "", false},
		{"stdin is no terminal", true, false, false, "", false},
		{"in CI", true, false, true, "true", false},
	} {
		if got := gateWanted(tc.shown, tc.noGate, tc.stdinTT, env(tc.ci)); got != tc.want {
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

// On a plain terminal a typed line answers the oldest item: a line that
// answers nothing asks again, d with a reason denies and the agent reads
// why, and a question takes the line as its answer.
func TestTermGateLines(t *testing.T) {
	shown := make(chan []monitor.Prompt, 16)
	again := make(chan string, 4)
	g := newTermGate(func(p []monitor.Prompt) { shown <- p })
	g.again = func(p monitor.Prompt) { again <- p.ID }
	in, typed := io.Pipe()
	go g.readLines(in)
	ctx := context.Background()
	decided := make(chan gate.Decision, 1)
	go func() {
		d, _ := g.Approve(ctx, gate.Approval{Tool: "Bash", Input: json.RawMessage(`{"command":"npm publish"}`)})
		decided <- d
	}()
	<-shown
	fmt.Fprintln(typed, "maybe")
	if id := <-again; id != "a1" {
		t.Fatalf("asked again about %s", id)
	}
	fmt.Fprintln(typed, "d not on a Friday")
	if d := <-decided; d.Allow || d.Message != "denied by the person at the terminal: not on a Friday" {
		t.Fatalf("decision %+v", d)
	}
	answered := make(chan string, 1)
	go func() { a, _ := g.Ask(ctx, gate.Question{Text: "Which?"}); answered <- a }()
	for p := range shown {
		if len(p) == 1 && p[0].Kind == monitor.PromptQuestion {
			break
		}
	}
	fmt.Fprintln(typed, "postgres")
	if a := <-answered; a != "postgres" {
		t.Errorf("answer %q", a)
	}
	if p := linePrompt(monitor.Prompt{ID: "q2", Kind: monitor.PromptQuestion, What: "Which\ndatabase?", Options: []string{"a", "b"}}); p != "ralph: the agent asks (q2): Which database? [a / b]\nralph: type the answer, then Enter" {
		t.Errorf("the question's lines: %q", p)
	}
}
