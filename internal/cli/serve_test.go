package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/syncbuf"
)

// fleetRig is a real `ralph serve` with git sessions whose agent is the
// scripted fake, driven by the real `ralph task` client.
type fleetRig struct {
	t        *testing.T
	ralph    string
	fake     string
	work     string
	home     string
	addr     string
	env      []string
	sessions []string // NAME=DIR
	daemon   *exec.Cmd
	log      *syncbuf.Buffer
	extra    []string // more flags for `ralph serve`
}

func newFleetRig(t *testing.T) *fleetRig {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("process groups and SIGKILL")
	}
	// Built per test into its own temporary directory, so nothing is left
	// behind (the build cache makes the second build a link).
	bin := t.TempDir()
	ralph := filepath.Join(bin, "ralph")
	args := []string{"build", "-o", ralph}
	if raceEnabled {
		args = append(args, "-race")
	}
	if b, err := exec.Command("go", append(args, "ralph/cmd/ralph")...).CombinedOutput(); err != nil {
		t.Fatalf("build ralph: %v\n%s", err, b)
	}
	fake, err := script.Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := &fleetRig{t: t, ralph: ralph, fake: fake, work: work, home: filepath.Join(work, "home"), addr: addr, log: &syncbuf.Buffer{}}
	r.env = append(os.Environ(), "HOME="+work, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0", "CI=true",
		"RALPH_HOME="+r.home, "RALPH_SERVER=http://"+addr, "RALPH_API_TOKEN=")
	t.Cleanup(func() {
		r.kill()
		if strings.Contains(r.log.String(), "DATA RACE") {
			t.Error("the daemon has a data race")
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", r.log.String())
		}
	})
	return r
}

// session makes a git repository whose agent plays its own script.
func (r *fleetRig) session(name string, s script.Script) (dir, scriptPath string) {
	r.t.Helper()
	dir = filepath.Join(r.work, "src-"+name)
	scriptPath = filepath.Join(r.work, "agent-"+name+".json")
	if err := s.Write(scriptPath); err != nil {
		r.t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	rc := fmt.Sprintf("CLAUDE_CODE_CMD=\"env %s=%s %s\"\nMAX_CALLS_PER_HOUR=10000\n", script.EnvScript, scriptPath, r.fake)
	os.WriteFile(filepath.Join(dir, ".ralphrc"), []byte(rc), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# "+name+"\n"), 0o644)
	// The .ralphrc names the agent's command: the daemon runs it only once
	// it is trusted, as `ralph run` does.
	trust := exec.Command(r.ralph, "trust", "-C", dir)
	trust.Env = r.env
	if b, err := trust.CombinedOutput(); err != nil {
		r.t.Fatalf("ralph trust: %v\n%s", err, b)
	}
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", a...)
		cmd.Dir, cmd.Env = dir, r.env
		if b, err := cmd.CombinedOutput(); err != nil {
			r.t.Fatalf("git %v: %v\n%s", a, err, b)
		}
	}
	r.sessions = append(r.sessions, name+"="+dir)
	return dir, scriptPath
}

func (r *fleetRig) start(maxParallel int) {
	r.t.Helper()
	args := []string{"serve", "--home", r.home, "--listen", r.addr, "--max-parallel", fmt.Sprint(maxParallel)}
	for _, s := range r.sessions {
		args = append(args, "--session", s)
	}
	// The watchdog reads a private tmux server, never the user's.
	args = append(append(args, "--tmux-socket", r.tmuxSocket()), r.extra...)
	r.daemon = exec.Command(r.ralph, args...)
	r.daemon.Env, r.daemon.Stdout, r.daemon.Stderr = r.env, r.log, r.log
	if err := r.daemon.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", r.addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("ralph serve did not listen on %s", r.addr)
}

func (r *fleetRig) tmuxSocket() string { return filepath.Join(r.work, "tmux.sock") }

func (r *fleetRig) kill() {
	if r.daemon != nil && r.daemon.Process != nil {
		r.daemon.Process.Signal(syscall.SIGKILL)
		r.daemon.Wait()
		r.daemon = nil
	}
}

// task runs `ralph task ARGS…` and returns its output and exit code.
func (r *fleetRig) task(args ...string) (string, string, int) {
	r.t.Helper()
	cmd := exec.Command(r.ralph, append([]string{"task"}, args...)...)
	cmd.Env = r.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (r *fleetRig) ok(args ...string) string {
	r.t.Helper()
	out, errs, code := r.task(args...)
	if code != 0 {
		r.t.Fatalf("ralph task %v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

func (r *fleetRig) status(session string) serve.TaskView {
	r.t.Helper()
	var v serve.TaskView
	if err := json.Unmarshal([]byte(r.ok("status", session, "--json")), &v); err != nil {
		r.t.Fatal(err)
	}
	return v
}

// waitFor polls the session's task until cond holds.
func (r *fleetRig) waitFor(session, what string, cond func(serve.TaskView) bool) serve.TaskView {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var v serve.TaskView
	for time.Now().Before(deadline) {
		v = r.status(session)
		if cond(v) {
			return v
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Fatalf("session %s: never %s; last: %+v", session, what, v)
	return v
}

func stateIs(s string) func(serve.TaskView) bool {
	return func(v serve.TaskView) bool { return string(v.State) == s }
}

// result is one stream-json result line of the fake agent.
func result(session, text string) json.RawMessage {
	b, _ := json.Marshal(text)
	return json.RawMessage(fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"session_id":%q,"result":%s}`, session, b))
}

func ralphStatus(status string, remaining int) string {
	return fmt.Sprintf("\n---RALPH_STATUS---\nSTATUS: %s\nEXIT_SIGNAL: false\nWORK_TYPE: IMPLEMENTATION\nFILES_MODIFIED: 1\nTASKS_REMAINING: %d\n---END_RALPH_STATUS---", status, remaining)
}

// checklist is a task file as the agent leaves it.
func checklist(title, session string, done ...bool) string {
	s := fmt.Sprintf("# Task: %s\n\n**Session:** %s\n**Status:** IN_PROGRESS\n\n## Checklist\n\n", title, session)
	for i, d := range done {
		box := " "
		if d {
			box = "x"
		}
		s += fmt.Sprintf("- [%s] step %d\n", box, i+1)
	}
	return s + "\n## RALPH_STATUS\n"
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (r *fleetRig) api(method, path, token, body string) (int, string) {
	r.t.Helper()
	req, _ := http.NewRequest(method, "http://"+r.addr+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// eventLog collects the lines of the API's event stream.
type eventLog struct {
	mu    sync.Mutex
	lines []string
}

func (e *eventLog) waitFor(sub string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		for _, l := range e.lines {
			if strings.Contains(l, sub) {
				e.mu.Unlock()
				return true
			}
		}
		e.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// events follows GET /api/events until the test ends.
func (r *fleetRig) events(token string) *eventLog {
	r.t.Helper()
	req, _ := http.NewRequest("GET", "http://"+r.addr+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.t.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	r.t.Cleanup(func() { resp.Body.Close() })
	e := &eventLog{}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				e.mu.Lock()
				e.lines = append(e.lines, l)
				e.mu.Unlock()
			}
		}
	}()
	return e
}
