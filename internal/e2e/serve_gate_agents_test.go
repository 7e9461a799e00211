package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
)

// The real Codex CLI under the real daemon asks with the gate's ask tool,
// which it finds with its tool search (Codex defers MCP servers' tools):
// the task shows the question while the call waits, `ralph task answer`
// answers it, and the answer is the tool's result in the same call.
func TestServeGateAskWithCodex(t *testing.T) {
	codex := agenttest.CodexBinary(t)
	work := t.TempDir()
	home, dir := filepath.Join(work, "home"), filepath.Join(work, "src")
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("", fakeapi.ToolSearch, map[string]any{"query": "ralph ask"}),
		fakeapi.ToolTurn("I need to know.", "ask", map[string]any{"question": "Which database?", "options": []string{"sqlite", "postgres"}}),
		fakeapi.TextTurn("Using {{tool_result}}." + statusBlock("COMPLETE", true)),
	}}}})
	addr, err := servetest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ralph := servetest.PlainRalph(t)
	env := append(agenttest.CodexEnv(t, srv.URL), servetest.Vars(home)...)
	env = append(env, "RALPH_CLAUDE_TIMEOUT_MINUTES=1", "RALPH_SERVER=http://"+addr)
	files := map[string]string{".ralphrc": fmt.Sprintf("AGENT_PROVIDER=codex\nAGENT_CMD=%q\n", codex), "README.md": "# db\n"}
	if err := servetest.Repo(ralph, env, dir, files); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", log.String())
		}
	})
	servetest.Serve(t, &log, ralph, env, "--home", home, "--listen", addr, "--max-parallel", "1",
		"--session", "db="+dir, "--watch-interval", "0")
	c := servetest.Client{T: t, Ralph: ralph, Env: env, Addr: addr}
	c.OK("start", "db", "Pick a database")
	c.OK("loop", "db", "3")
	v := c.WaitFor("db", "waiting with the call's question", func(v serve.TaskView) bool {
		return v.State == "waiting" && len(v.Questions) > 0
	})
	if v.Questions[0] != "Which database?" || !strings.HasPrefix(v.Message, "waiting: question q1: Which database?") {
		t.Fatalf("the task shows %q, %q", v.Questions, v.Message)
	}
	c.OK("answer", "db", "postgres")
	v = c.WaitFor("db", "done", servetest.StateIs("done"))
	if v.LoopCount != 1 {
		t.Errorf("the answer cost a new call: %d loops", v.LoopCount)
	}
	reqs := srv.MessageRequests()
	if len(reqs) != 3 || reqs[2].Iteration != 0 || reqs[2].Turn != 2 {
		t.Fatalf("%d requests; the answer did not come back in the same call", len(reqs))
	}
	if got := reqs[2].Messages.LastToolResult(); !strings.Contains(got, "postgres") {
		t.Errorf("the model received %q as the tool's result", got)
	}
}
