package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// The history of a session's tasks through `ralph task list --all` and
// `ralph task show`, against a real daemon: three tasks on one session
// (done, done after a question, cancelled) and one from GitHub on another
// stay listed after they finish, filtered by session, state, origin and
// time; show prints each iteration's receipt, the questions and answers,
// who did what from where, and the origin link.
func TestTaskHistoryEndToEnd(t *testing.T) {
	r := servetest.New(t, servetest.Options{Token: "history-e2e-token-0123456789abcdef"})
	fileA := filepath.Join(r.Home, "handoffs", "a-task.md")
	r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		// t1: one iteration ticks the checklist.
		{Files: map[string]string{fileA: servetest.TaskFile("Build it", "a", true), "one.txt": "1\n2\n3\n"},
			StdoutLines: []json.RawMessage{servetest.Result{Session: "sess-a", Text: "Made it." + servetest.RalphStatus("IN_PROGRESS", false, 0),
				CostUSD: 0.25, InputTokens: 1000, OutputTokens: 200}.Line()}},
		// t2: a question, then (answered) done.
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a2", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a2", "Used SQLite, all done."+servetest.CompleteStatus)}},
		// t3: works slowly until it is cancelled.
		{Files: map[string]string{"slow.txt": "{{call}}\n"}, Sleep: script.Duration(500 * time.Millisecond),
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a3", "Slowly."+servetest.RalphStatus("IN_PROGRESS", false, 3))}},
	}})
	r.Session("b", script.Script{})
	r.Start(2)

	r.OK("start", "a", "Build it", "--loop", "5")
	t1 := r.WaitFor("a", "t1 done", servetest.StateIs("done"))
	// Each task counts its loops from 1, and a log's name tells two runs
	// of one number apart by their start to the second.
	time.Sleep(1100 * time.Millisecond)
	r.OK("start", "a", "Pick a database", "--loop", "5")
	r.WaitFor("a", "t2's question", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	r.OK("answer", "a", "SQLite, please")
	t2 := r.WaitFor("a", "t2 done", servetest.StateIs("done"))
	r.OK("start", "a", "Work slowly", "--loop", "50")
	r.WaitFor("a", "t3 running", servetest.StateIs("running"))
	r.OK("cancel", "a")
	t3 := r.WaitFor("a", "t3 cancelled", servetest.StateIs("cancelled"))
	// A task from GitHub, as the requests service starts one: it links
	// back to its issue. (The API says who sent it: the API.)
	issue := "https://github.com/acme/api/issues/42"
	if code, out := r.API("POST", "/api/commands", r.Token, `{"verb":"start","session":"b","title":"Fix the login","origin":"github","origin_url":"`+issue+`","who":{"surface":"github","user":"octo"}}`); code != 201 {
		t.Fatalf("start from github: %d %s", code, out)
	}
	if code, out := r.API("POST", "/api/commands", r.Token, `{"verb":"start","session":"b","title":"x","origin_url":"javascript:alert(1)","who":{"surface":"api"}}`); code != 400 || !strings.Contains(out, "origin_url") {
		t.Errorf("a bad origin_url: %d %s", code, out)
	}

	// Without --all: each session's current task, as before.
	if out := r.OK("list"); strings.Contains(out, t1.ID+" ") || !strings.Contains(out, t3.ID) {
		t.Errorf("list:\n%s", out)
	}
	all := r.OK("list", "--all")
	for _, id := range []string{t1.ID, t2.ID, t3.ID, "t4"} {
		if !strings.Contains(all, id+" ") {
			t.Errorf("list --all lacks %s:\n%s", id, all)
		}
	}
	if strings.Index(all, "t4 ") > strings.Index(all, t1.ID+" ") {
		t.Errorf("list --all is not newest first:\n%s", all)
	}
	listed := func(args ...string) []string {
		t.Helper()
		var vs []serve.TaskView
		out := r.OK(append([]string{"list", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &vs); err != nil {
			t.Fatalf("list %v --json: %v\n%s", args, err, out)
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.ID)
		}
		return got
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--all"}, "t4 t3 t2 t1"},
		{[]string{"--session", "a"}, "t3 t2 t1"},
		{[]string{"--state", "done"}, "t2 t1"},
		{[]string{"--state", "cancelled"}, "t3"},
		{[]string{"--origin", "github"}, "t4"},
		{[]string{"--origin", "cli", "--state", "done"}, "t2 t1"},
		{[]string{"--since", "1h"}, "t4 t3 t2 t1"},
		{[]string{"--since", time.Now().Add(48 * time.Hour).Format(time.DateOnly)}, ""},
	} {
		if got := strings.Join(listed(c.args...), " "); got != c.want {
			t.Errorf("list %v: %q, want %q", c.args, got, c.want)
		}
	}
	for args, want := range map[string]string{"--state=finished": "--state", "--origin=fax": "--origin", "--since=soon": "since"} {
		if _, errs, code := r.Task("list", args); code != 1 || !strings.Contains(errs, want) {
			t.Errorf("list %s: exit %d %s", args, code, errs)
		}
	}

	// A finished task's record: its iteration's receipt, who did what.
	show := r.OK("show", t1.ID)
	for _, want := range []string{"Build it", "done", "origin: cli", "iterations (1):", "continue", "1 file changed (+3 −0)",
		"1200 tokens, $0.2500", "said: Made it.", "start_loop by cli", "(plan_complete)", "task file:"} {
		if !strings.Contains(show, want) {
			t.Errorf("show %s lacks %q:\n%s", t1.ID, want, show)
		}
	}
	// The questions and the answer, and who answered from where.
	show = r.OK("show", t2.ID)
	for _, want := range []string{"iterations (2):", "Q: PostgreSQL or SQLite?", "A: SQLite, please", "answer by cli"} {
		if !strings.Contains(show, want) {
			t.Errorf("show %s lacks %q:\n%s", t2.ID, want, show)
		}
	}
	if show := r.OK("show", t3.ID); !strings.Contains(show, "cancel by cli") || !strings.Contains(show, "cancelled") {
		t.Errorf("show %s:\n%s", t3.ID, show)
	}
	if show := r.OK("show", "t4"); !strings.Contains(show, "origin: github ("+issue+")") || !strings.Contains(show, "start by api") {
		t.Errorf("show t4:\n%s", show)
	}
	var rec serve.TaskDetail
	if err := json.Unmarshal([]byte(r.OK("show", t1.ID, "--json")), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Iterations) != 1 || rec.Iterations[0].LinesAdded != 3 || rec.Iterations[0].Loop != 1 || rec.Iterations[0].Decision != "continue" ||
		!rec.Iterations[0].HasLog || rec.Iterations[0].Why == "" || rec.State != "done" {
		t.Errorf("show --json: %+v", rec)
	}
	if _, errs, code := r.Task("show", "t99"); code != 1 || !strings.Contains(errs, "no task t99") {
		t.Errorf("show t99: exit %d %s", code, errs)
	}

	// The iteration's log, rendered as `ralph logs --iteration` renders it.
	code, out := r.API("GET", "/api/tasks/id/"+t1.ID+"/iterations/1", r.Token, "")
	var il serve.IterationLog
	if err := json.Unmarshal([]byte(out), &il); code != 200 || err != nil || !strings.Contains(il.Log, "Made it.") || il.Iteration.Loop != 1 {
		t.Errorf("iteration log: %d %v %s", code, err, out)
	}
	if code, _ := r.API("GET", "/api/tasks/id/"+t1.ID+"/iterations/7", r.Token, ""); code != 404 {
		t.Errorf("a missing iteration: %d", code)
	}
	if code, out := r.API("GET", "/api/tasks?state=finished", r.Token, ""); code != 400 || !strings.Contains(out, "state") {
		t.Errorf("a bad filter: %d %s", code, out)
	}
}
