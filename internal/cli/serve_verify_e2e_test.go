package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

// A daemon session is gated like `ralph run`: the agent's first claim
// fails the session's verify command and the task goes on, told why; the
// second passes and the task is done, its view saying so.
func TestServeSessionIsVerified(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	r.Env = append(r.Env, `RALPH_VERIFY_CMD=grep -q ok state.txt || { echo "state.txt is not ok"; exit 3; }`)
	done := func(files map[string]string) script.Iteration {
		return script.Iteration{Files: files,
			StdoutLines: []json.RawMessage{servetest.ResultLine("s", "All done."+servetest.CompleteStatus)}}
	}
	r.Session("v", script.Script{Iterations: []script.Iteration{
		done(map[string]string{"one.txt": "1\n"}),
		done(map[string]string{"state.txt": "ok\n"}),
	}})
	r.Start(1)
	r.OK("start", "--loop", "5", "v", "Make the state ok")
	v := r.WaitFor("v", "the task done", servetest.StateIs("done"))
	if len(v.History) != 2 {
		t.Fatalf("history %+v", v.History)
	}
	first, second := v.History[0], v.History[1]
	if first.Verified || first.Verify == nil || first.Verify.ExitCode != 3 || !strings.Contains(first.Verify.Tail, "state.txt is not ok") {
		t.Errorf("the failed claim: %+v %+v", first, first.Verify)
	}
	if !second.Verified || second.Verify == nil || second.Verify.ExitCode != 0 {
		t.Errorf("the claim that stood: %+v %+v", second, second.Verify)
	}
	status := r.OK("status", "v")
	for _, want := range []string{"not verified (`grep -q ok state.txt", "exited 3)", "verified (`grep -q ok state.txt"} {
		if !strings.Contains(status, want) {
			t.Errorf("ralph task status lacks %q:\n%s", want, status)
		}
	}
}
