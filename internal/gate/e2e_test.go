package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
	"ralph/internal/agent/claude"
	"ralph/internal/fakeapi"
	"ralph/internal/gate"
	"ralph/internal/shellwords"
)

// The test binary is the bridge too, as ralph is (`ralph mcp-bridge`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "mcp-bridge" {
		if err := gate.Bridge(os.Getenv(agent.CallDirEnv), os.Getenv(gate.SecretEnv), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// person is a scripted responder that records what it was asked.
type person struct {
	answer   string
	decision gate.Decision
	delay    time.Duration // before answering
	silent   bool          // never answers: waits for ctx

	mu        sync.Mutex
	asked     []gate.Question
	approvals []gate.Approval
}

func (p *person) wait(ctx context.Context) error {
	if p.silent {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-time.After(p.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *person) Ask(ctx context.Context, q gate.Question) (string, error) {
	p.mu.Lock()
	p.asked = append(p.asked, q)
	p.mu.Unlock()
	if err := p.wait(ctx); err != nil {
		return "", err
	}
	return p.answer, nil
}

func (p *person) Approve(ctx context.Context, a gate.Approval) (gate.Decision, error) {
	p.mu.Lock()
	p.approvals = append(p.approvals, a)
	p.mu.Unlock()
	if err := p.wait(ctx); err != nil {
		return gate.Decision{}, err
	}
	return p.decision, nil
}

// gateCall runs one real Claude Code call whose model asks a question and
// then runs a Bash command outside the allow-list; it returns the tool
// results the model received and the call's result.
func gateCall(t *testing.T, p *person, g *gate.Gate, timeout time.Duration, wrap func([]string, string, []string, ...string) ([]string, error)) ([]string, agent.Result, string) {
	t.Helper()
	bin := agenttest.ClaudeBinary(t)
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("", gate.AskTool, map[string]any{"question": "Which colour?", "options": []string{"red", "blue"}}),
		fakeapi.ToolTurn("", "Bash", map[string]string{"command": "touch made-by-bash", "description": "make a file"}),
		fakeapi.TextTurn("done"),
	}}}})
	a, err := claude.New(shellwords.Join([]string{bin}))
	if err != nil {
		t.Fatal(err)
	}
	a.Runner = &agent.Runner{Grace: time.Second, Wrap: wrap}
	exe, _ := os.Executable()
	g.Responder, g.Bridge = p, exe
	logs := t.TempDir()
	res, err := a.Run(context.Background(), agent.Invocation{
		Dir: dir, Prompt: "go", AllowedTools: []string{"Write"}, Gate: g, Timeout: timeout,
		Env:        agenttest.ClaudeEnv(t, fake.URL),
		StdoutPath: filepath.Join(logs, "out"), StderrPath: filepath.Join(logs, "err"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if pr := fake.Problems(); len(pr) > 0 {
		errOut, _ := os.ReadFile(filepath.Join(logs, "err"))
		t.Fatalf("fake: %v\nstderr: %s", pr, errOut)
	}
	var results []string
	for _, r := range fake.MessageRequests() {
		if r.Iteration == 0 && r.Turn > 0 {
			results = append(results, lastToolResult(t, r.Body))
		}
	}
	_, statErr := os.Stat(filepath.Join(dir, "made-by-bash"))
	made := "no file"
	if statErr == nil {
		made = "file made"
	}
	return results, res, made
}

// lastToolResult is the text of the last tool_result in a Messages API
// request body: what the model received.
func lastToolResult(t *testing.T, body []byte) string {
	t.Helper()
	s, err := fakeapi.LastToolResultIn(body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGateRealClaudeAskAndAllow(t *testing.T) {
	p := &person{answer: "blue", decision: gate.Decision{Allow: true}}
	results, res, made := gateCall(t, p, &gate.Gate{}, time.Minute, nil)
	if res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("call: %+v", res)
	}
	if len(results) != 2 || results[0] != "blue" {
		t.Fatalf("tool results the model received: %q", results)
	}
	if made != "file made" {
		t.Errorf("the allowed Bash command did not run in the call: %s; results %q", made, results)
	}
	if len(p.asked) != 1 || p.asked[0].Text != "Which colour?" || strings.Join(p.asked[0].Options, ",") != "red,blue" {
		t.Errorf("asked %+v", p.asked)
	}
	if len(p.approvals) != 1 || p.approvals[0].Tool != "Bash" || !strings.Contains(string(p.approvals[0].Input), "touch made-by-bash") {
		t.Errorf("approvals %+v", p.approvals)
	}
	if an := res.Analysis; an == nil || len(an.PermissionDenials) != 0 {
		t.Errorf("analysis %+v", an)
	}
}

func TestGateRealClaudeDeny(t *testing.T) {
	p := &person{answer: "red", decision: gate.Decision{Message: "not on a Friday"}}
	results, res, made := gateCall(t, p, &gate.Gate{}, time.Minute, nil)
	if res.ExitCode != 0 || made != "no file" {
		t.Fatalf("call %+v, %s", res, made)
	}
	if len(results) != 2 || !strings.Contains(results[1], "not on a Friday") {
		t.Errorf("the model was not told the denial: %q", results)
	}
}

// Nobody answers: the question comes back "no answer yet", the tool is
// denied, and the call goes on.
func TestGateRealClaudeTimeout(t *testing.T) {
	p := &person{silent: true}
	results, res, made := gateCall(t, p, &gate.Gate{Timeout: 2 * time.Second}, time.Minute, nil)
	if res.ExitCode != 0 || made != "no file" {
		t.Fatalf("call %+v, %s", res, made)
	}
	if len(results) != 2 || results[0] != gate.NoAnswer || !strings.Contains(results[1], "no decision within 2s") {
		t.Errorf("results %q", results)
	}
}

// The call's time limit leaves out the time a person takes: an
// 8s limit holds a call whose person takes 5s for each of two answers.
func TestGateRealClaudeWaitNotCounted(t *testing.T) {
	p := &person{answer: "blue", decision: gate.Decision{Allow: true}, delay: 5 * time.Second}
	_, res, made := gateCall(t, p, &gate.Gate{}, 8*time.Second, nil)
	if res.TimedOut || res.ExitCode != 0 || made != "file made" {
		t.Fatalf("call %+v, %s", res, made)
	}
	if res.Duration < 10*time.Second {
		t.Errorf("the person's waits were not waited: %v", res.Duration)
	}
}

// A user's MCP_TOOL_TIMEOUT (2s here) does not cut a person's wait (3s per
// answer): the gate's server carries its own limit in the call's MCP
// configuration, which outranks it.
func TestGateRealClaudeOutlastsMCPToolTimeout(t *testing.T) {
	t.Setenv("MCP_TOOL_TIMEOUT", "2000") // the runner's environment reaches the CLI
	p := &person{answer: "blue", decision: gate.Decision{Allow: true}, delay: 3 * time.Second}
	results, res, made := gateCall(t, p, &gate.Gate{}, time.Minute, nil)
	if res.ExitCode != 0 || made != "file made" || len(results) != 2 || results[0] != "blue" {
		t.Fatalf("call %+v, %s, results %q", res, made, results)
	}
}
