package gate_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gate"
	"ralph/internal/sandbox"
)

// needBwrap opens a real bubblewrap sandbox: missing locally it skips, under
// CI=true it fails.
func needBwrap(t *testing.T, spec sandbox.Spec) *sandbox.Sandbox {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is not installed; .ci/run installs it (scripts/install-test-deps.sh)")
		}
		t.Skip("bwrap is not installed")
	}
	spec.Provider = sandbox.Bwrap
	sb, err := sandbox.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// The real CLI in the sandbox reaches the gate through the call directory,
// and the bridge (here the test binary, under the hidden /tmp) is visible.
func TestGateBwrapRealClaude(t *testing.T) {
	sb := needBwrap(t, sandbox.Spec{Agent: "claude"})
	p := &person{answer: "blue", decision: gate.Decision{Allow: true}}
	results, res, made := gateCall(t, p, &gate.Gate{}, time.Minute, sb.Wrap)
	if res.ExitCode != 0 || made != "file made" || len(results) != 2 || results[0] != "blue" {
		t.Fatalf("call %+v, %s, results %q", res, made, results)
	}
}

// With the sandbox's network off the bridge still reaches the gate: an MCP
// client speaks to the bridge inside the sandbox and gets the answer.
func TestGateBwrapNetworkNone(t *testing.T) {
	sb := needBwrap(t, sandbox.Spec{Agent: "claude", Network: sandbox.NetworkNone})
	exe, _ := os.Executable()
	answered := make(chan struct{})
	p := &person{answer: "blue"}
	g := &gate.Gate{Responder: answerHook{p, answered}, Bridge: exe}
	in, feed := io.Pipe()
	go func() {
		io.WriteString(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"question":"Which colour?"}}}
`)
		select {
		case <-answered:
			time.Sleep(time.Second) // for the answer to travel back
		case <-time.After(20 * time.Second):
		}
		feed.Close()
	}()
	logs := t.TempDir()
	r := &agent.Runner{Wrap: sb.Wrap, Grace: 200 * time.Millisecond}
	res, err := r.Run(context.Background(), agent.Process{
		Argv: []string{exe, "mcp-bridge"}, Dir: t.TempDir(), Stdin: in, Gate: g, Timeout: 30 * time.Second,
		StdoutPath: filepath.Join(logs, "out"), StderrPath: filepath.Join(logs, "err"),
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(filepath.Join(logs, "out"))
	errOut, _ := os.ReadFile(filepath.Join(logs, "err"))
	if res.ExitCode != 0 || !strings.Contains(string(out), `"id":2,"result":{"content":[{"type":"text","text":"blue"}]`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", res.ExitCode, out, errOut)
	}
}

type answerHook struct {
	*person
	answered chan struct{}
}

func (h answerHook) Ask(ctx context.Context, q gate.Question) (string, error) {
	defer close(h.answered)
	return h.person.Ask(ctx, q)
}
