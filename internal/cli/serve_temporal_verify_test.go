package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

// The verify gate on the Temporal backend: the check runs as an activity
// where the session's calls run, and the task ends done only once a claim
// passes it, its history saying so — as on the local backend.
func TestTemporalSessionIsVerified(t *testing.T) {
	r := newTemporalRig(t)
	r.Env = append(r.Env, `RALPH_VERIFY_CMD=grep -q ok state.txt || { echo "state.txt is not ok"; exit 3; }`)
	done := func(files map[string]string) script.Iteration {
		return script.Iteration{Files: files,
			StdoutLines: []json.RawMessage{servetest.ResultLine("s", "All done."+servetest.CompleteStatus)}}
	}
	r.Session("v", script.Script{Iterations: []script.Iteration{
		done(map[string]string{"one.txt": "1\n"}),
		done(map[string]string{"state.txt": "ok\n"}),
	}})
	r.worker("a")
	r.Start(1)
	r.OK("start", "--loop", "5", "v", "Make the state ok")
	v := r.WaitFor("v", "the task done", servetest.StateIs("done"))
	if v.LoopCount != 2 || len(v.History) != 2 {
		t.Fatalf("done after %d loops, history %+v", v.LoopCount, v.History)
	}
	first, second := v.History[0], v.History[1]
	if first.Verified || first.Verify == nil || first.Verify.ExitCode != 3 || !strings.Contains(first.Verify.Tail, "state.txt is not ok") {
		t.Errorf("the failed claim: %+v %+v", first, first.Verify)
	}
	if !second.Verified || second.Verify == nil {
		t.Errorf("the claim that stood: %+v %+v", second, second.Verify)
	}
	if log := r.wlogs["a"].String(); !strings.Contains(log, "verify `grep -q ok state.txt") {
		t.Errorf("the worker did not run the check:\n%s", log)
	}
}
