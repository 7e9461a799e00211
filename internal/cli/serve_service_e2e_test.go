package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// One step starts work (`ralph task start --loop N`, or the API's one
// command), every command is recorded with who gave it — the CLI with its
// user, another API client as the API — and `status` shows it.
func TestServeOneStepStartAndWhoAsked(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	work := script.Iteration{Files: map[string]string{"w.txt": "{{call}}\n"},
		StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a", "Working."+servetest.RalphStatus("IN_PROGRESS", false, 2))}}
	r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{work}})
	r.Session("b", script.Script{RepeatLast: true, Iterations: []script.Iteration{work}})
	r.Env = append(r.Env, "USER=ann")
	r.Start(2)

	out := r.OK("start", "--loop", "2", "a", "Add", "a", "health", "endpoint")
	if !strings.Contains(out, "started a (task ") || !strings.Contains(out, "looping, at most 2 iterations") {
		t.Errorf("start --loop says:\n%s", out)
	}
	v := r.WaitFor("a", "its two loops", servetest.StateIs("waiting"))
	if v.LoopCount != 2 || v.ExitReason != "max_loops" {
		t.Errorf("one-step task: %d loops, %s", v.LoopCount, v.ExitReason)
	}
	if len(v.Commands) != 1 || v.Commands[0].Verb != "start_loop" || v.Commands[0].By != "cli:ann" {
		t.Errorf("recorded commands: %+v", v.Commands)
	}
	if st := r.OK("status", "a"); !strings.Contains(st, "start_loop by cli:ann") {
		t.Errorf("human status does not say who started it:\n%s", st)
	}

	// Another client of the API is the API, whatever it claims to be.
	token := strings.TrimSpace(readFile(t, r.Home+"/api-token"))
	code, body := r.API("POST", "/api/commands", token,
		`{"verb":"start_loop","session":"b","title":"Second","max_loops":1,"who":{"surface":"telegram","user":"mallory"}}`)
	if code != 201 {
		t.Fatalf("POST /api/commands: %d %s", code, body)
	}
	var got serve.TaskView
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Commands) != 1 || got.Commands[0].By != "api" {
		t.Errorf("the API's command was recorded as %+v (%v)", got.Commands, err)
	}
	if code, body := r.API("POST", "/api/commands", token, `{"verb":"start","session":"b","title":"","who":{}}`); code != 400 ||
		!strings.Contains(body, "title: a task needs a title") {
		t.Errorf("a command without its title: %d %s", code, body)
	}
}

// A session's second task counts its own loops from 1 everywhere: the
// view's loop count, its history, its breaker's current loop and the
// daemon's log agree.
func TestServeLoopsArePerTask(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	work := script.Iteration{Files: map[string]string{"w.txt": "{{call}}\n"},
		StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a", "Working."+servetest.RalphStatus("IN_PROGRESS", false, 2))}}
	r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{work}})
	r.Start(1)

	r.OK("start", "--loop", "3", "a", "First")
	r.WaitFor("a", "the first task's loops", servetest.StateIs("waiting"))
	r.OK("cancel", "a")
	r.OK("start", "--loop", "2", "a", "Second")
	v := r.WaitFor("a", "the second task's loops", servetest.StateIs("waiting"))
	if v.Title != "Second" || v.LoopCount != 2 || v.CircuitBreaker.CurrentLoop != 2 {
		t.Errorf("second task: loop %d, breaker's current loop %d (%s)", v.LoopCount, v.CircuitBreaker.CurrentLoop, v.Title)
	}
	if len(v.History) != 2 || v.History[0].Loop != 1 || v.History[1].Loop != 2 {
		t.Errorf("second task's history: %+v", v.History)
	}
	if out := r.OK("circuit", "a"); !strings.Contains(out, "loop 2/2): breaker CLOSED") {
		t.Errorf("ralph task circuit:\n%s", out)
	}
	if n := strings.Count(r.Log.String(), "[a] ralph: starting at loop 1 "); n != 2 {
		t.Errorf("the log starts %d loops at 1, want 2 (one per task):\n%s", n, r.Log.String())
	}
}

// The daemon says where its dashboard is and where the token lives, never
// the token itself into its log; a client that knows only the daemon's
// home finds it, on whatever port it listens.
func TestServeSaysWhereItIsAndClientsFindIt(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	r.Session("a", script.Script{})
	r.Start(1)
	token := strings.TrimSpace(readFile(t, r.Home+"/api-token"))
	log := r.Log.String()
	if !strings.Contains(log, "dashboard http://"+r.Addr+"/ — log in once with http://"+r.Addr+"/?token=TOKEN, the token in "+r.Home+"/api-token") {
		t.Errorf("the start-up lines do not say where the dashboard and the token are:\n%s", log)
	}
	if strings.Contains(log, token) {
		t.Error("the token is in the daemon's log")
	}
	var env []string
	for _, e := range r.Env {
		if !strings.HasPrefix(e, "RALPH_SERVER=") && !strings.HasPrefix(e, "RALPH_API_TOKEN=") {
			env = append(env, e)
		}
	}
	c := r.Client
	c.Env = append(env, "RALPH_SERVER=")
	if out, errs, code := c.Task("list", "--home", r.Home); code != 0 || !strings.Contains(out, "no tasks") {
		t.Errorf("a client with only --home: exit %d\n%s%s", code, out, errs)
	}
}
