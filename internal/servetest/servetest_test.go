package servetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/analyze"
	"ralph/internal/syncbuf"
	"ralph/internal/taskfile"
)

func TestMain(m *testing.M) { os.Exit(Tests(m).Run()) }

// analysis is what ralph's own analyzer reads in lines.
func analysis(t *testing.T, lines ...json.RawMessage) *analyze.Analysis {
	t.Helper()
	var in bytes.Buffer
	for _, l := range lines {
		in.Write(l)
		in.WriteByte('\n')
	}
	a, err := analyze.Analyze(&in, analyze.Options{ExitCode: 0, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The builders write what ralph reads: a status block's fields, the
// agent session, the cost; the end of a task; a question; a request's
// report.
func TestLinesAreWhatRalphReads(t *testing.T) {
	a := analysis(t, AssistantText("Reading."), AssistantTool("Read", map[string]any{"file_path": "a.go"}),
		Result{Session: "sess-1", Text: "Step 1." + RalphStatus("IN_PROGRESS", false, 2), CostUSD: 0.5, InputTokens: 7, OutputTokens: 3}.Line())
	if a.Status != "IN_PROGRESS" || a.ExitSignal || !a.ExitSignalExplicit || a.TasksRemaining != 2 || a.FilesModified != 1 || a.WorkType != "IMPLEMENTATION" {
		t.Errorf("status block: %+v", a)
	}
	if a.SessionID != "sess-1" || a.Usage.CostUSD != 0.5 || a.Usage.InputTokens != 7 || a.Usage.OutputTokens != 3 || a.ToolCalls != 1 {
		t.Errorf("session, usage, tools: %s %+v %d", a.SessionID, a.Usage, a.ToolCalls)
	}
	if a := analysis(t, ResultLine("s", "Done."+RalphStatus("COMPLETE", true, 0))); a.Status != "COMPLETE" || !a.ExitSignal {
		t.Errorf("complete: %s %v", a.Status, a.ExitSignal)
	}
	if a := analysis(t, ResultLine("s", "All done."+CompleteStatus)); a.Status != "COMPLETE" || !a.ExitSignal || a.TasksRemaining != 0 {
		t.Errorf("CompleteStatus: %s %v", a.Status, a.ExitSignal)
	}
	if a := analysis(t, ResultLine("s", "Stuck."+Question("PostgreSQL or SQLite?"))); !a.ClarificationNeeded || !slices.Contains(a.ClarificationQuestions, "PostgreSQL or SQLite?") {
		t.Errorf("question: %v %q", a.ClarificationNeeded, a.ClarificationQuestions)
	}
	a = analysis(t, ResultLine("s", "Working."+ClarityStatus("COMPLETE", true, true, false, "", "Added hello.txt.")))
	if a.Status != "COMPLETE" || !a.ExitSignal || !a.PRReady || a.ClarificationNeeded || a.Summary != "Added hello.txt." {
		t.Errorf("clarity block: %+v", a)
	}
	// A line is one line, whatever the text holds.
	if l := ResultLine("s", "a\nb"); bytes.Contains(l, []byte("\n")) {
		t.Errorf("a result line spans lines: %s", l)
	}
}

func TestTaskFile(t *testing.T) {
	f, err := taskfile.Parse("t.md", []byte(TaskFile("Build it", "a", true, false, true)))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Checklist.Counts()
	if f.Title != "Build it" || f.Session != "a" || f.Status != "IN_PROGRESS" || c.Total != 3 || c.Done != 2 || f.Checklist.Complete() {
		t.Errorf("task file: %+v %+v", f, c)
	}
	if f, _ := taskfile.Parse("t.md", []byte(TaskFile("x", "a", true, true))); !f.Checklist.Complete() {
		t.Errorf("every box ticked is not complete: %+v", f.Checklist)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// The whole rig: a session's task runs to done through the real client,
// the event stream and the API see it; a killed daemon is gone and a
// restarted one is waited for afresh; SIGTERM stops it cleanly.
func TestDaemon(t *testing.T) {
	d := New(t, Options{Token: "servetest-token-0123456789"})
	file := filepath.Join(d.Home, "handoffs", "a-task.md")
	_, scriptA := d.Session("a", script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{file: TaskFile("Build it", "a", true, false), "one.txt": "1\n"},
			StdoutLines: []json.RawMessage{ResultLine("sess-a", "Step 1."+RalphStatus("IN_PROGRESS", false, 1))}},
		{Files: map[string]string{file: TaskFile("Build it", "a", true, true), "two.txt": "2\n"},
			StdoutLines: []json.RawMessage{ResultLine("sess-a", "Step 2."+RalphStatus("IN_PROGRESS", false, 0))}},
	}})
	d.Start(1)
	evs := d.Events(d.Token)
	if v := d.View("start", "a", "Build", "it"); v.State != "waiting" || v.Title != "Build it" {
		t.Fatalf("start: %+v", v)
	}
	if _, errs, code := d.Task("start", "nowhere", "x"); code != 1 || !strings.Contains(errs, "unknown session") {
		t.Errorf("a refused verb: exit %d %s", code, errs)
	}
	d.OK("loop", "a", "5")
	if v := d.WaitFor("a", "done", StateIs("done")); v.LoopCount != 2 {
		t.Errorf("done after %d loops, want 2", v.LoopCount)
	}
	if calls, err := script.Calls(scriptA); err != nil || len(calls) != 2 {
		t.Errorf("agent calls: %d %v", len(calls), err)
	}
	if !evs.WaitFor(`"type":"task_done"`, 10*time.Second) {
		t.Error("the event stream never saw the task done")
	}
	if evs.WaitFor("no such event", 50*time.Millisecond) {
		t.Error("the event stream saw what was never sent")
	}
	var v struct {
		State string `json:"state"`
	}
	if code, body := d.API("GET", "/api/tasks/a", d.Token, ""); code != 200 || json.Unmarshal([]byte(body), &v) != nil || v.State != "done" {
		t.Errorf("GET /api/tasks/a: %d %s", code, body)
	}
	if code, _ := d.API("GET", "/api/tasks/a", "", ""); code != 401 {
		t.Errorf("without the token: %d", code)
	}

	pid := d.Pid()
	d.Kill()
	if alive(pid) {
		t.Errorf("the killed daemon %d lives", pid)
	}
	// The log already says "listening" once: the restart must wait for
	// its own line, and serve at once.
	d.Start(1)
	if v := d.Status("a"); v.State != "done" {
		t.Errorf("after the restart: %+v", v)
	}
	if n := strings.Count(d.Log.String(), "ralph serve: listening on "); n != 2 {
		t.Errorf("%d starts in the log, want 2", n)
	}
	pid = d.Pid()
	if err := d.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if alive(pid) {
		t.Errorf("the stopped daemon %d lives", pid)
	}
	if err := d.Stop(); err == nil {
		t.Error("a second stop found a daemon")
	}
}

// fatalTB records the failure Serve reports instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// A daemon that exits instead of listening fails the test at once, with
// what it said, rather than after the wait.
func TestServeFailsFast(t *testing.T) {
	ralph := Ralph(t)
	home := filepath.Join(t.TempDir(), "home")
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir() // not a git repository: the daemon refuses it
	f := &fatalTB{TB: t}
	began := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(f, &syncbuf.Buffer{}, ralph, Env(t.TempDir(), home), "--home", home, "--listen", addr, "--session", "x="+plain)
	}()
	<-done
	if !strings.Contains(f.msg, "exited before it listened") || !strings.Contains(f.msg, "is not a git repository") {
		t.Errorf("the failure: %q", f.msg)
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("it took %s to notice", d)
	}
}
