package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

// A loop waiting for an answer gives up its slot; answered while every
// slot is taken, it waits for one like any queued task — never a loop past
// --max-parallel — and the answer it was given survives a kill -9 before
// the slot comes.
func TestServeAnsweredQuestionWaitsForASlot(t *testing.T) {
	for _, kill := range []bool{false, true} {
		name := "slot frees"
		if kill {
			name = "kill -9 before the slot frees"
		}
		t.Run(name, func(t *testing.T) {
			r := servetest.New(t, servetest.Options{})
			_, scriptQ := r.Session("q", questionScript())
			// b's call holds the only slot until the test releases it.
			bdir, _ := r.Session("b", script.Script{RepeatLast: true, Iterations: []script.Iteration{
				{WaitFile: "release", Files: map[string]string{"b.txt": "b\n"},
					StdoutLines: []json.RawMessage{servetest.ResultLine("sess-b", "Done."+servetest.CompleteStatus)}},
			}})
			r.Start(1)
			r.OK("start", "q", "Store things")
			r.OK("loop", "q")
			asked(t, r)
			r.OK("start", "b", "Busy work")
			r.OK("loop", "b")
			r.WaitFor("b", "running", servetest.StateIs("running"))

			if v := r.View("answer", "q", "Use", "SQLite."); v.State != "queued" || len(v.Questions) != 0 {
				t.Fatalf("the answer's reply while the only slot is taken: %s %q", v.State, v.Questions)
			}
			for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				if v := r.Status("q"); v.State != "queued" {
					t.Fatalf("the answered task is %s while b holds the only slot", v.State)
				}
				if n := callsIn(t, scriptQ); n != 1 {
					t.Fatalf("q made call %d while b holds the only slot", n)
				}
			}
			release := func() {
				if err := os.WriteFile(filepath.Join(bdir, "release"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if kill {
				r.Kill()
				release()
				r.Start(1)
			} else if v := r.Status("b"); v.State != "running" {
				t.Fatalf("b is %s before its call ended", v.State)
			} else {
				release()
			}
			r.WaitFor("b", "done", servetest.StateIs("done"))
			if v := r.WaitFor("q", "done", servetest.StateIs("done")); v.LoopCount != 2 {
				t.Errorf("answered task: loop %d", v.LoopCount)
			}
			answeredCall(t, scriptQ)
			if n := strings.Count(r.Log.String(), "notify: ❓ session q"); n != 1 {
				t.Errorf("the question was noticed %d times", n)
			}
		})
	}
}

// callsIn counts the calls a scripted agent has had.
func callsIn(t *testing.T, scriptPath string) int {
	t.Helper()
	return len(strings.Split(strings.TrimSpace(readFile(t, script.ArgvLog(scriptPath))), "\n"))
}
