package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// Every verb of `ralph task` against a real daemon with two sessions: a
// task looped to done by ticking its checklist, the JSON contract, the
// refusals, a question answered in the same agent session, stop and cancel.
func TestServeTasksEndToEnd(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	fileA := filepath.Join(r.Home, "handoffs", "a-task.md")
	// Session a: breaks the task into two steps, then ticks both (no exit
	// signal: the ticked checklist alone ends the task); later tasks work
	// slowly for ever.
	_, scriptA := r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{Files: map[string]string{fileA: servetest.TaskFile("Build it", "a", true, false), "one.txt": "1\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a", "Made step 1."+servetest.RalphStatus("IN_PROGRESS", false, 1))}},
		{Files: map[string]string{fileA: servetest.TaskFile("Build it", "a", true, true), "two.txt": "2\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a", "Made step 2."+servetest.RalphStatus("IN_PROGRESS", false, 0))}},
		{Files: map[string]string{"slow.txt": "{{call}}\n"}, Sleep: script.Duration(700 * time.Millisecond),
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-a2", "Slowly."+servetest.RalphStatus("IN_PROGRESS", false, 3))}},
	}})
	// Session b: asks a question, then (answered) finishes.
	_, scriptB := r.Session("b", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-b", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		// The agent edits the task file in place; the fake cannot, so it
		// leaves it (and its answers) alone and says it is done.
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-b", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}})
	r.Start(2)

	// Auth: no token, a wrong one → 401 and nothing done.
	token := strings.TrimSpace(readFile(t, filepath.Join(r.Home, "api-token")))
	if fi, _ := os.Stat(filepath.Join(r.Home, "api-token")); fi.Mode().Perm() != 0o600 {
		t.Errorf("api-token mode %v", fi.Mode().Perm())
	}
	for _, tok := range []string{"", "wrong"} {
		if code, body := r.API("POST", "/api/tasks", tok, `{"session":"a","title":"sneaky"}`); code != 401 || strings.Contains(body, token) {
			t.Errorf("token %q: %d %s", tok, code, body)
		}
	}
	if code, body := r.API("GET", "/api/tasks", token, ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("after refused requests: %d %s", code, body)
	}
	// Malformed requests name the field.
	for body, field := range map[string]string{`{"session":5,"title":"x"}`: "session", `{"session":"a"}`: "title", `{"session":"a","title":"x","colour":"red"}`: "colour"} {
		if code, reply := r.API("POST", "/api/tasks", token, body); code != 400 || !strings.Contains(reply, field) {
			t.Errorf("%s: %d %s", body, code, reply)
		}
	}
	if code, reply := r.API("POST", "/api/tasks/a/loop", token, `{"max_loops":"ten"}`); code != 400 || !strings.Contains(reply, "max_loops") {
		t.Errorf("bad max_loops: %d %s", code, reply)
	}

	// The event stream sees the task's life.
	evs := r.Events(token)

	// Start, refusals, loop to done.
	if out := r.OK("start", "a", "Build", "it"); !strings.Contains(out, "waiting") || !strings.Contains(out, "Build it") {
		t.Errorf("start: %s", out)
	}
	if _, errs, code := r.Task("start", "a", "Another"); code != 1 || !strings.Contains(errs, "busy") {
		t.Errorf("second task on a busy session: exit %d %s", code, errs)
	}
	if _, errs, code := r.Task("start", "zz", "Nowhere"); code != 1 || !strings.Contains(errs, `unknown session "zz"; known sessions: a, b`) {
		t.Errorf("unknown session: exit %d %s", code, errs)
	}
	if _, errs, code := r.Task("loop", "b"); code != 1 || !strings.Contains(errs, "has no task") {
		t.Errorf("loop without a task: exit %d %s", code, errs)
	}
	r.OK("loop", "a", "10")
	v := r.WaitFor("a", "done", servetest.StateIs("done"))
	if v.ExitReason != "plan_complete" || v.LoopCount != 2 || v.MaxLoops != 10 || v.Origin != "cli" || v.ID == "" {
		t.Errorf("done task: %+v", v)
	}
	if len(v.History) != 2 || v.History[1].Loop != 2 || v.History[1].StatusBlock["TASKS_REMAINING"] != "0" || v.History[0].FilesModified < 1 {
		t.Errorf("history: %+v", v.History)
	}
	if v.CircuitBreaker.State != "CLOSED" || v.CircuitBreaker.LastProgressLoop != 2 {
		t.Errorf("breaker: %+v", v.CircuitBreaker)
	}
	archived := readFile(t, filepath.Join(r.Home, "handoffs", "archive", "a-"+v.ID+"-task.md"))
	if !strings.Contains(archived, "**Status:** DONE") || !strings.Contains(archived, "TASKS_REMAINING: 0") || !strings.Contains(archived, "- [x] step 2") {
		t.Errorf("archived task file:\n%s", archived)
	}
	if _, err := os.Stat(fileA); !os.IsNotExist(err) {
		t.Errorf("the finished task file stayed: %v", err)
	}
	for _, want := range []string{`"type":"task_created"`, `"type":"task_running"`, `"type":"iteration_end"`, `"type":"task_done"`} {
		if !evs.WaitFor(want, 10*time.Second) {
			t.Errorf("event stream: no %s", want)
		}
	}
	// The list is what GET /api/tasks returns, with the contract's fields.
	list := r.OK("list", "--json")
	var raw []map[string]any
	if err := json.Unmarshal([]byte(list), &raw); err != nil || len(raw) != 1 {
		t.Fatalf("list --json: %v %s", err, list)
	}
	for _, f := range []string{"id", "session", "title", "origin", "state", "loop_count", "max_loops", "exit_reason", "circuit_breaker", "history", "questions", "pr_url"} {
		if _, ok := raw[0][f]; !ok {
			t.Errorf("list --json lacks %s", f)
		}
	}
	cb, _ := raw[0]["circuit_breaker"].(map[string]any)
	for _, f := range []string{"state", "consecutive_no_progress", "consecutive_same_error", "last_progress_loop", "total_opens", "reason", "current_loop"} {
		if _, ok := cb[f]; !ok {
			t.Errorf("circuit_breaker lacks %s", f)
		}
	}
	if code, body := r.API("GET", "/api/tasks", token, ""); code != 200 || strings.TrimSpace(body) != strings.TrimSpace(list) {
		t.Errorf("GET /api/tasks differs from list --json:\n%s\n%s", body, list)
	}
	// The human list: a header and aligned columns, the origin among them.
	table := strings.Split(strings.TrimSpace(r.OK("list")), "\n")
	if len(table) != 2 || !regexp.MustCompile(`^SESSION +ID +STATE +LOOP +ORIGIN +COST +TITLE$`).MatchString(table[0]) ||
		!regexp.MustCompile(`^a +\S+ +done +\d+/\d+ +cli +`).MatchString(table[1]) ||
		strings.Index(table[0], "STATE") != strings.Index(table[1], "done") {
		t.Errorf("human list:\n%s", strings.Join(table, "\n"))
	}

	// A question, answered: the loop resumes in the same agent session with
	// the answer in the task file.
	r.OK("start", "b", "Store things")
	r.OK("loop", "b")
	v = r.WaitFor("b", "waiting on a question", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	if v.State != "waiting" || v.ExitReason != "needs_clarification" || !strings.Contains(v.Questions[0], "SQLite") {
		t.Errorf("question: %+v", v)
	}
	if _, errs, code := r.Task("loop", "b"); code != 1 || !strings.Contains(errs, "waiting for an answer") {
		t.Errorf("loop over a question: exit %d %s", code, errs)
	}
	if out := r.OK("status", "b"); !strings.Contains(out, "question: ") || !strings.Contains(out, "ralph task answer b") {
		t.Errorf("human status:\n%s", out)
	}
	r.OK("answer", "b", "Use", "SQLite.")
	v = r.WaitFor("b", "done", servetest.StateIs("done"))
	if v.LoopCount != 2 || len(v.Questions) != 0 {
		t.Errorf("answered task: %+v", v)
	}
	answered := readFile(t, v.TaskFile)
	if !strings.Contains(answered, "## Answers") || !strings.Contains(answered, "Q: PostgreSQL or SQLite?") || !strings.Contains(answered, "A: Use SQLite.") {
		t.Errorf("answers in the task file:\n%s", answered)
	}
	calls := readFile(t, script.ArgvLog(scriptB))
	lines := strings.Split(strings.TrimSpace(calls), "\n")
	var second script.Call
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &second) != nil || !slices.Contains(second.Args, "sess-b") {
		t.Errorf("the answered call did not resume the agent session sess-b:\n%s", calls)
	}
	if !strings.Contains(strings.Join(second.Args, "\n"), "## Answers to your questions") || !strings.Contains(strings.Join(second.Args, "\n"), "A: Use SQLite.") {
		t.Errorf("the answered call's prompt lacks the answer:\n%s", strings.Join(second.Args, "\n"))
	}

	// Stop: the loop ends after its iteration and the task waits; cancel
	// archives it; a running loop cancelled ends at once.
	r.OK("start", "a", "Slow work")
	r.OK("loop", "a", "50")
	r.WaitFor("a", "running an iteration", func(v serve.TaskView) bool { return v.State == "running" && v.LoopCount >= 1 })
	if out := r.OK("pause", "a"); !strings.Contains(out, ": paused; it holds before its next iteration until `ralph task resume a`") {
		t.Errorf("pause says:\n%s", out)
	}
	if out := r.OK("resume", "a"); !strings.Contains(out, ": resumed") {
		t.Errorf("resume says:\n%s", out)
	}
	if out := r.OK("stop", "a"); !strings.Contains(out, ": stopping after the iteration in progress") && !strings.Contains(out, ": stopped;") {
		t.Errorf("stop says:\n%s", out)
	}
	if calls := readFile(t, script.ArgvLog(scriptA)); strings.Count(calls, `"sess-a"`) != 1 {
		t.Errorf("the new task resumed the previous task's agent session:\n%s", calls)
	}
	v = r.WaitFor("a", "stopped", servetest.StateIs("waiting"))
	if v.ExitReason != "interrupted" {
		t.Errorf("stopped task: %+v", v)
	}
	if _, errs, code := r.Task("stop", "a"); code != 1 || !strings.Contains(errs, "not looping") {
		t.Errorf("stop of a waiting task: exit %d %s", code, errs)
	}
	r.OK("loop", "a", "50")
	r.WaitFor("a", "running", servetest.StateIs("running"))
	began := time.Now()
	out := r.OK("cancel", "a", "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.State != "cancelled" {
		t.Fatalf("cancel: %v %s", err, out)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("cancel took %s", d)
	}
	if !strings.Contains(v.TaskFile, filepath.Join("archive", "a-"+v.ID+"-task.md")) || !strings.Contains(readFile(t, v.TaskFile), "**Status:** CANCELLED") {
		t.Errorf("cancelled task file %s", v.TaskFile)
	}
	if _, errs, code := r.Task("reset", "a"); code != 1 || !strings.Contains(errs, "has no task") {
		t.Errorf("reset of a finished task: exit %d %s", code, errs)
	}
	if log := r.Log.String(); !strings.Contains(log, "notify: ✅ session a") || !strings.Contains(log, "notify: ❓ session b") || strings.Contains(log, token) {
		t.Errorf("notifications (or the token) in the daemon log:\n%s", log)
	}
}

// kill -9 of the daemon mid-loop, then a restart: the running task resumes
// from its last saved iteration with nothing counted twice, the queued one
// starts, and no agent of the dead daemon lives on.
func TestServeKillNineResumes(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	pidDir := t.TempDir()
	slow := func(name string) script.Script {
		return script.Script{RepeatLast: true, Iterations: []script.Iteration{{
			Files: map[string]string{"work.txt": "{{call}}\n"}, Sleep: script.Duration(time.Second),
			PIDFile:     filepath.Join(pidDir, name+".pid"),
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-"+name, "Worked."+servetest.RalphStatus("IN_PROGRESS", false, 5))},
		}}}
	}
	_, scriptC := r.Session("c", slow("c"))
	r.Session("d", slow("d"))
	r.Start(1)
	r.OK("start", "c", "Long job")
	r.OK("start", "d", "Queued job")
	r.OK("loop", "c", "6")
	r.OK("loop", "d", "2")
	if v := r.Status("d"); v.State != "queued" {
		t.Fatalf("with one slot the second task queues: %s", v.State)
	}
	// Kill during the third agent call (the fake's argv log says when it
	// began; polling the client would be too slow under -race).
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(script.ArgvLog(scriptC)); strings.Count(string(b), "\n") >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	pid, _ := os.ReadFile(filepath.Join(pidDir, "c.pid"))
	r.Kill()
	if p := strings.TrimSpace(string(pid)); p != "" {
		deadline := time.Now().Add(10 * time.Second)
		for processRunning(p) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if processRunning(p) {
			t.Errorf("agent %s outlived the daemon", p)
		}
	}

	r.Start(1)
	c := r.WaitFor("c", "finished its loops", servetest.StateIs("waiting"))
	d := r.WaitFor("d", "finished its loops", servetest.StateIs("waiting"))
	if c.ExitReason != "max_loops" || c.LoopCount != 6 || d.ExitReason != "max_loops" || d.LoopCount != 2 {
		t.Errorf("after the restart: c %s %d/%d, d %s %d/%d", c.ExitReason, c.LoopCount, c.MaxLoops, d.ExitReason, d.LoopCount, d.MaxLoops)
	}
	if len(c.History) != 5 || c.History[0].Loop != 2 || c.History[4].Loop != 6 {
		t.Errorf("history after the restart: %+v", c.History)
	}
	r.Kill()
	db, err := serve.OpenDB(filepath.Join(r.Home, "ralph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := db.History(c.Session, c.ID, 100)
	if err != nil || len(h) != 6 {
		t.Fatalf("stored iterations of c: %v %d", err, len(h))
	}
	for i, m := range h {
		if m.Loop != i+1 {
			t.Errorf("iteration %d is loop %d: one lost or counted twice", i+1, m.Loop)
		}
	}
	if st, _, _ := db.LoadState("c"); st.Loop != 6 || len(st.Calls.Calls) != 6 {
		t.Errorf("state: loop %d, %d calls in the rate-limit window", st.Loop, len(st.Calls.Calls))
	}
	// Three calls before the kill (the third cut short and not counted),
	// four after it: loops 3 to 6.
	if calls := readFile(t, script.ArgvLog(scriptC)); strings.Count(calls, "\n") != 7 {
		t.Errorf("agent calls on c: %d, want 7", strings.Count(calls, "\n"))
	}
	if !strings.Contains(r.Log.String(), "resuming 1 task(s)") {
		t.Errorf("the restart did not say it resumed the task")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// processRunning reports a live (not zombie) process.
func processRunning(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		var n int
		for _, c := range pid {
			n = n*10 + int(c-'0')
		}
		return syscall.Kill(n, 0) == nil
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// A session directory that is not a git repository stops the daemon with
// a clear message.
func TestServeRefusesNonGitSession(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	plain := t.TempDir()
	cmd := exec.Command(r.Ralph, "serve", "--home", r.Home, "--listen", r.Addr, "--session", "x="+plain)
	cmd.Env = r.Env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "session x: "+plain+" is not a git repository") {
		t.Fatalf("%v: %s", err, out)
	}
	cmd = exec.Command(r.Ralph, "serve", "--home", r.Home, "--session", "../evil="+plain)
	cmd.Env = r.Env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "a name is letters") {
		t.Fatalf("bad session name: %v %s", err, out)
	}
}

// An agent that makes no progress opens the breaker: the task halts and
// says why; a reset closes the breaker and the task waits for a new loop.
func TestServeHaltAndReset(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	r.Session("h", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-h", "Looked around."+servetest.RalphStatus("IN_PROGRESS", false, 3))}},
	}})
	r.Start(1)
	r.OK("start", "h", "Spin")
	r.OK("loop", "h", "20")
	v := r.WaitFor("h", "halted", servetest.StateIs("halted"))
	if v.ExitReason != "circuit_breaker_open" || v.CircuitBreaker.State != "OPEN" || v.CircuitBreaker.TotalOpens != 1 || v.CircuitBreaker.Reason == "" {
		t.Errorf("halted task: %+v", v)
	}
	if !strings.Contains(r.Log.String(), "notify: ⛔ session h") {
		t.Errorf("no halt notification:\n%s", r.Log.String())
	}
	if out := r.OK("status", "h"); !strings.Contains(out, "halted") || !strings.Contains(out, "breaker OPEN") {
		t.Errorf("human status:\n%s", out)
	}
	out := r.OK("reset", "h", "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.State != "waiting" || v.CircuitBreaker.State != "CLOSED" {
		t.Errorf("after reset: %v %s", err, out)
	}
	// The loop may run again (and, no wiser, halts again).
	r.OK("loop", "h", "20")
	if v := r.WaitFor("h", "halted again", servetest.StateIs("halted")); v.CircuitBreaker.TotalOpens != 2 {
		t.Errorf("second halt: %+v", v.CircuitBreaker)
	}
}

// A usage limit one loop hits holds the other loops on the same agent: the
// second never makes the failing call, it waits for the same reset.
func TestServeSharedUsageLimit(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	limit := script.Iteration{ExitCode: 1, StdoutLines: []json.RawMessage{json.RawMessage(
		`{"type":"result","subtype":"success","is_error":true,"session_id":"s","api_error":"usage_limit_reached","result":"You've hit your 5-hour limit · resets 3am (UTC)"}`)}}
	_, scriptU := r.Session("u", script.Script{RepeatLast: true, Iterations: []script.Iteration{limit}})
	_, scriptV := r.Session("v", script.Script{RepeatLast: true, Iterations: []script.Iteration{limit}})
	r.Start(2)
	r.OK("start", "u", "First")
	r.OK("start", "v", "Second")
	r.OK("loop", "u")
	// One agent without accounts set is one account, named by the agent.
	held := func(v serve.TaskView) bool {
		return string(v.State) == "waiting" && strings.HasPrefix(v.Activity, "waiting for quota on claude until ") && v.Account == "claude"
	}
	r.WaitFor("u", "held by the usage limit", held)
	r.OK("loop", "v")
	v := r.WaitFor("v", "held by the usage limit", held)
	u := r.Status("u")
	if v.WaitUntil.IsZero() || !v.WaitUntil.Equal(u.WaitUntil) {
		t.Errorf("v waits until %v, u until %v", v.WaitUntil, u.WaitUntil)
	}
	if _, err := os.Stat(script.ArgvLog(scriptV)); !os.IsNotExist(err) {
		t.Errorf("v called its agent into the known limit: %v", err)
	}
	if calls := readFile(t, script.ArgvLog(scriptU)); strings.Count(calls, "\n") != 1 {
		t.Errorf("u called %d times", strings.Count(calls, "\n"))
	}
	if log := r.Log.String(); !strings.Contains(log, "notify: ⏳ session v") || !strings.Contains(log, "seen by session u") {
		t.Errorf("daemon log:\n%s", log)
	}
	for _, s := range []string{"u", "v"} {
		if v := r.View("cancel", s); v.State != "cancelled" {
			t.Errorf("cancel %s: %s", s, v.State)
		}
	}
}

// The agent dies with a kill -9'd daemon (SIGTERM on its parent's death),
// but a tool it started that ignores SIGTERM lives on in its process
// group: the next daemon ends that group.
func TestServeRestartEndsOrphanedAgentGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process start times from /proc")
	}
	r := servetest.New(t, servetest.Options{})
	pids := t.TempDir()
	gcFile := filepath.Join(pids, "grandchild.pid")
	r.Session("g", script.Script{RepeatLast: true, Iterations: []script.Iteration{{
		SpawnGrandchild: true, GrandchildIgnoresSIGTERM: true, GrandchildPIDFile: gcFile,
		Sleep: script.Duration(time.Minute), StdoutLines: []json.RawMessage{servetest.ResultLine("sess-g", "Working."+servetest.RalphStatus("IN_PROGRESS", false, 1))},
	}}})
	r.Start(1)
	r.OK("start", "g", "Build with tools")
	r.OK("loop", "g", "3")
	var gc string
	deadline := time.Now().Add(30 * time.Second)
	for gc == "" && time.Now().Before(deadline) {
		b, _ := os.ReadFile(gcFile)
		gc = strings.TrimSpace(string(b))
		time.Sleep(20 * time.Millisecond)
	}
	if gc == "" {
		t.Fatal("the agent never started its tool")
	}
	os.Remove(gcFile)
	r.Kill()
	time.Sleep(500 * time.Millisecond)
	if !processRunning(gc) {
		t.Fatal("the tool that ignores SIGTERM died with the daemon: the test's premise does not hold")
	}
	r.Start(1)
	deadline = time.Now().Add(10 * time.Second)
	for processRunning(gc) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if processRunning(gc) {
		t.Errorf("the orphaned tool %s outlived the restart", gc)
	}
	if !strings.Contains(r.Log.String(), "ended agent process group") {
		t.Errorf("the restart did not say it ended the group")
	}
	// The resumed loop's own tool goes with its cancel.
	r.WaitFor("g", "running again", servetest.StateIs("running"))
	for deadline = time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(gcFile); err == nil {
			break
		}
	}
	if v := r.View("cancel", "g"); v.State != "cancelled" {
		t.Errorf("cancel: %s", v.State)
	}
	if b, _ := os.ReadFile(gcFile); len(b) > 0 && processRunning(strings.TrimSpace(string(b))) {
		t.Errorf("the cancelled loop's tool lives on")
	}
}

// SIGTERM stops the daemon cleanly (exit 0, the agent ended); the task it
// was running stays running in the store and the next daemon finishes it.
func TestServeGracefulStopResumes(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	_, scriptE := r.Session("e", script.Script{RepeatLast: true, Iterations: []script.Iteration{{
		Files: map[string]string{"work.txt": "{{call}}\n"}, Sleep: script.Duration(time.Second),
		StdoutLines: []json.RawMessage{servetest.ResultLine("sess-e", "Worked."+servetest.RalphStatus("IN_PROGRESS", false, 5))},
	}}})
	r.Start(1)
	r.OK("start", "e", "Job")
	r.OK("loop", "e", "4")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(script.ArgvLog(scriptE)); strings.Count(string(b), "\n") >= 2 {
			break
		}
	}
	if err := r.Stop(); err != nil {
		t.Fatalf("daemon after SIGTERM: %v", err)
	}
	if !strings.Contains(r.Log.String(), "stopped; running tasks resume at the next start") {
		t.Errorf("no clean stop in the log")
	}
	r.Start(1)
	v := r.WaitFor("e", "finished its loops", servetest.StateIs("waiting"))
	if v.ExitReason != "max_loops" || v.LoopCount != 4 {
		t.Errorf("after the restart: %s %d/%d", v.ExitReason, v.LoopCount, v.MaxLoops)
	}
}

// A session whose .ralphrc names a program runs nothing until it is
// trusted: a changed file halts the task with what to do, and the daemon
// never starts the agent.
func TestServeRefusesAnUntrustedSession(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	dir, scriptPath := r.Session("u", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-u", "Worked."+servetest.RalphStatus("IN_PROGRESS", false, 1))}},
	}})
	f, err := os.OpenFile(filepath.Join(dir, ".ralphrc"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("# changed after it was trusted\n")
	f.Close()
	r.Start(1)
	r.OK("start", "u", "Anything")
	r.OK("loop", "u", "3")
	v := r.WaitFor("u", "halted", servetest.StateIs("halted"))
	if !strings.Contains(v.Message, "trust") {
		t.Errorf("halted without saying why: %+v", v)
	}
	if _, err := os.Stat(script.ArgvLog(scriptPath)); err == nil {
		t.Error("the untrusted agent command ran")
	}
}
