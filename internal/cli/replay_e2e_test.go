package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

// `ralph replay TASK` makes a daemon task's recorded decisions again: the
// iteration rows keep their inputs, read through the API while the daemon
// runs and from its store under RALPH_HOME once it is gone. The API's
// views leave the inputs out.
func TestReplayDaemonTask(t *testing.T) {
	r := servetest.New(t, servetest.Options{Token: "replay-test-token"})
	r.Session("a", script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{"one.txt": "1\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a", "Did one."+servetest.RalphStatus("IN_PROGRESS", false, 1))}},
		{Files: map[string]string{"two.txt": "2\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a", "All done."+servetest.CompleteStatus)}},
	}})
	r.Start(1)
	r.OK("start", "--loop", "5", "a", "Two steps")
	v := r.WaitFor("a", "done", servetest.StateIs("done"))
	if v.LoopCount != 2 || v.ID == "" {
		t.Fatalf("task %s: %d loops", v.ID, v.LoopCount)
	}
	if _, body := r.API("GET", "/api/tasks/a", r.Token, ""); strings.Contains(body, `"replay"`) || !strings.Contains(body, `"history"`) {
		t.Errorf("the task view carries replay inputs or no history:\n%s", body)
	}

	if code, body := r.API("GET", "/api/replay/"+v.ID, "", ""); code != 401 {
		t.Errorf("the replay rows without the API token: %d %s", code, body)
	}
	if code, body := r.API("GET", "/api/replay/"+v.ID, r.Token, ""); code != 200 || !strings.Contains(body, `"replay":{"v":1`) {
		t.Errorf("the replay rows: %d %.300s", code, body)
	}

	replay := func(env []string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(r.Ralph, append([]string{"replay"}, args...)...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	want := []string{
		`(?m)^WHERE +LOOP +STEP +RECORDED +TODAY`,
		`(?m)^` + v.ID + `#1 +1 +next +call:claude +call:claude`,
		`(?m)^` + v.ID + `#1 +1 +fold +continue +continue`,
		`(?m)^` + v.ID + `#2 +2 +fold +stop:project_complete +stop:project_complete`,
		`(?m)^4 decisions replayed, 0 differ$`,
	}
	check := func(how, out, errs string, code int) {
		t.Helper()
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", how, code, out, errs)
		}
		for _, w := range want {
			if !regexp.MustCompile(w).MatchString(out) {
				t.Errorf("%s: no %s in\n%s", how, w, out)
			}
		}
	}
	out, errs, code := replay(r.Env, v.ID)
	check("through the API", out, errs, code)
	if _, errs, code := replay(r.Env, "t999"); code != 1 || !strings.Contains(errs, `no task "t999"`) {
		t.Errorf("an unknown task: exit %d, %s", code, errs)
	}

	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	out, errs, code = replay(r.Env, v.ID)
	check("from the store", out, errs, code)
}
