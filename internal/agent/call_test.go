package agent_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
	"ralph/internal/analyze"
)

func callInvocation(t *testing.T) agent.Invocation {
	dir := t.TempDir()
	return agent.Invocation{Dir: dir, Env: []string{"A=b"}, Timeout: time.Minute,
		StdoutPath: filepath.Join(dir, "out.log"), StderrPath: filepath.Join(dir, "err.log")}
}

func TestCallRun(t *testing.T) {
	fixed := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	fake := &agenttest.FakeRunner{Stdout: "working\n", Stderr: "Claude AI usage limit reached|1795219258\n",
		Result: agent.ProcessResult{ExitCode: 1, Duration: time.Second, Warnings: []string{"w"}}}
	inv := callInvocation(t)
	inv.Live = true
	var evs []agent.LiveEvent
	inv.OnEvent = func(e agent.LiveEvent) { evs = append(evs, e) }
	var gotOpts analyze.Options
	c := agent.Call{
		Agent: "x", Argv: []string{"x", "run"}, Invocation: inv, Runner: fake, Stdin: strings.NewReader("prompt"),
		Live: func(_ string, emit func(agent.LiveEvent)) func([]byte) { return agent.LiveLines(emit) },
		Now:  func() time.Time { return fixed }, Options: analyze.Options{AllowedTools: []string{"Write"}},
		Analyze: func(r io.Reader, o analyze.Options) (*analyze.Analysis, error) {
			gotOpts = o
			return analyze.Analyze(r, o)
		},
	}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := fake.Got
	if !slices.Equal(p.Argv, c.Argv) || p.Dir != inv.Dir || !slices.Equal(p.Env, inv.Env) || p.Timeout != time.Minute ||
		p.StdoutPath != inv.StdoutPath || p.StderrPath != inv.StderrPath || string(fake.GotStdin) != "prompt" {
		t.Errorf("process %+v", p)
	}
	if res.ExitCode != 1 || res.Duration != time.Second || !slices.Equal(res.Warnings, []string{"w"}) || res.StdoutPath != inv.StdoutPath {
		t.Errorf("result %+v", res)
	}
	if gotOpts.ExitCode != 1 || !gotOpts.Now.Equal(fixed) || !slices.Equal(gotOpts.AllowedTools, []string{"Write"}) ||
		!strings.Contains(string(gotOpts.Stderr), "usage limit") {
		t.Errorf("analysis options %+v", gotOpts)
	}
	if !res.Analysis.UsageLimit.Detected || len(evs) != 1 || evs[0].Text != "working" {
		t.Errorf("analysis %+v, events %+v", res.Analysis, evs)
	}

	// Not live: no line callback.
	inv.Live = false
	c.Invocation = inv
	if _, err := c.Run(context.Background()); err != nil || fake.Got.OnLine != nil {
		t.Errorf("OnLine %v, err %v", fake.Got.OnLine != nil, err)
	}
}

func TestCallRunFailures(t *testing.T) {
	inv := callInvocation(t)
	se := &agent.StartError{Command: "x", Err: os.ErrNotExist}
	res, err := agent.Call{Agent: "x", Argv: []string{"x"}, Invocation: inv, Hint: "install x",
		Runner: &agenttest.FakeRunner{Err: se, Result: agent.ProcessResult{ExitCode: -1, StartErr: se}}}.Run(context.Background())
	if !errors.Is(err, os.ErrNotExist) || se.Hint != "install x" || res.StartErr == nil || res.Analysis != nil || res.ExitCode != -1 {
		t.Errorf("start error: %+v, %v", res, err)
	}
	// A hint of the caller's own is kept.
	se = &agent.StartError{Command: "x", Err: os.ErrNotExist, Hint: "mine"}
	_, _ = agent.Call{Argv: []string{"x"}, Invocation: inv, Hint: "install x", Runner: &agenttest.FakeRunner{Err: se}}.Run(context.Background())
	if se.Hint != "mine" {
		t.Errorf("hint %q", se.Hint)
	}

	// Cancelled before it started: nothing to analyse, no error.
	res, err = agent.Call{Argv: []string{"x"}, Invocation: inv,
		Runner: &agenttest.FakeRunner{Result: agent.ProcessResult{ExitCode: -1, Interrupted: true}}}.Run(context.Background())
	if err != nil || !res.Interrupted || res.Analysis != nil {
		t.Errorf("interrupted: %+v, %v", res, err)
	}

	_, err = agent.Call{Agent: "x", Argv: []string{"x"}, Invocation: inv, Runner: &agenttest.FakeRunner{},
		Analyze: func(io.Reader, analyze.Options) (*analyze.Analysis, error) { return nil, errors.New("bad input") }}.Run(context.Background())
	if err == nil || err.Error() != "x: analyse output: bad input" {
		t.Errorf("analyzer error: %v", err)
	}
}

// An output line too long to read may hold the call's usage; the run is
// told instead of silently counting nothing.
func TestCallRunWarnsOfSkippedLines(t *testing.T) {
	huge := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("x", 17<<20) + `"}]}}` + "\n"
	fake := &agenttest.FakeRunner{Stdout: huge + `{"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"ok"}` + "\n"}
	res, err := agent.Call{Agent: "x", Argv: []string{"x"}, Invocation: callInvocation(t), Runner: fake}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "not counted") }) {
		t.Fatalf("no warning about the skipped line: %q", res.Warnings)
	}
}
