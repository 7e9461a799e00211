package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/syncbuf"
)

// daemonRig is a real `ralph serve` (built from this tree) whose sessions'
// agent is the scripted fake, as the fleet tests in internal/cli use.
type daemonRig struct {
	t        *testing.T
	ralph    string
	fake     string
	work     string
	home     string
	addr     string
	token    string
	env      []string
	sessions []string
	daemon   *exec.Cmd
	log      *syncbuf.Buffer
}

func newDaemonRig(t *testing.T) *daemonRig {
	t.Helper()
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	work := t.TempDir()
	r := &daemonRig{t: t, ralph: ralph, fake: fake, work: work, home: filepath.Join(work, "home"), addr: addr,
		token: "dashboard-browser-test-token-0123456789", log: &syncbuf.Buffer{}}
	r.env = append(os.Environ(), "HOME="+work, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0",
		"RALPH_HOME="+r.home, "RALPH_API_TOKEN="+r.token)
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

// session makes a git repository whose agent plays s.
func (r *daemonRig) session(name string, s script.Script) {
	r.t.Helper()
	dir := filepath.Join(r.work, "src-"+name)
	path := filepath.Join(r.work, "agent-"+name+".json")
	if err := s.Write(path); err != nil {
		r.t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	rc := fmt.Sprintf("CLAUDE_CODE_CMD=\"env %s=%s %s\"\nMAX_CALLS_PER_HOUR=10000\n", script.EnvScript, path, r.fake)
	writeFile(r.t, filepath.Join(dir, ".ralphrc"), rc)
	writeFile(r.t, filepath.Join(dir, "README.md"), "# "+name+"\n")
	r.run(dir, r.ralph, "trust", "-C", dir)
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		r.run(dir, "git", a...)
	}
	r.sessions = append(r.sessions, name+"="+dir)
}

func (r *daemonRig) run(dir, name string, args ...string) {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, r.env
	if b, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("%s %v: %v\n%s", name, args, err, b)
	}
}

func (r *daemonRig) start() {
	r.t.Helper()
	args := []string{"serve", "--home", r.home, "--listen", r.addr, "--max-parallel", "4"}
	for _, s := range r.sessions {
		args = append(args, "--session", s)
	}
	r.daemon = exec.Command(r.ralph, args...)
	r.daemon.Env, r.daemon.Stdout, r.daemon.Stderr = r.env, r.log, r.log
	if err := r.daemon.Start(); err != nil {
		r.t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", r.addr); err == nil {
			c.Close()
			return
		}
	}
	r.t.Fatalf("ralph serve did not listen on %s", r.addr)
}

func (r *daemonRig) kill() {
	if r.daemon != nil && r.daemon.Process != nil {
		r.daemon.Process.Signal(syscall.SIGKILL)
		r.daemon.Wait()
		r.daemon = nil
	}
}

// api calls the daemon's API; token "" sends none.
func (r *daemonRig) api(method, path, token, body string) (int, string) {
	r.t.Helper()
	req, _ := http.NewRequest(method, "http://"+r.addr+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (r *daemonRig) ok(method, path, body string) string {
	r.t.Helper()
	code, out := r.api(method, path, r.token, body)
	if code/100 != 2 {
		r.t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	return out
}

// state is the session's task state, by the API.
func (r *daemonRig) state(session string) string {
	r.t.Helper()
	var v struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(r.ok("GET", "/api/tasks/"+session, "")), &v); err != nil {
		r.t.Fatal(err)
	}
	return v.State
}

// cpu is the daemon's CPU time so far (user and system).
func (r *daemonRig) cpu() time.Duration {
	r.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.daemon.Process.Pid))
	if err != nil {
		r.t.Skipf("no /proc: %v", err)
	}
	// Fields after the command's closing parenthesis: utime and stime are
	// the 12th and 13th, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var u, s int64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &s)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// streamLine is a stream-json line of the fake agent.
func streamLine(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func assistantText(text string) json.RawMessage {
	return streamLine(map[string]any{"type": "assistant", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}})
}

func assistantTool(name string, input map[string]any) json.RawMessage {
	return streamLine(map[string]any{"type": "assistant", "message": map[string]any{"content": []any{
		map[string]any{"type": "tool_use", "id": "tu-" + name, "name": name, "input": input}}}})
}

func resultLine(session, text string) json.RawMessage {
	return streamLine(map[string]any{"type": "result", "subtype": "success", "is_error": false, "session_id": session, "result": text,
		"total_cost_usd": 0.0125, "usage": map[string]any{"input_tokens": 1200, "output_tokens": 340}})
}

func ralphStatus(remaining int) string {
	return fmt.Sprintf("\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\nWORK_TYPE: IMPLEMENTATION\nFILES_MODIFIED: 1\nTASKS_REMAINING: %d\n---END_RALPH_STATUS---", remaining)
}

// taskFile is a task file as the agent leaves it.
func taskFile(title, session string, done ...bool) string {
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
