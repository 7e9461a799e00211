package servetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/serve"
)

// Client drives the daemon at Addr as its users do: the real `ralph task`
// client (run with Env, which names the daemon in RALPH_SERVER) and the
// HTTP API.
type Client struct {
	T     testing.TB
	Ralph string
	Env   []string
	Addr  string
}

// Task runs `ralph task ARGS…` and returns its output and exit code.
func (c *Client) Task(args ...string) (stdout, stderr string, code int) {
	c.T.Helper()
	cmd := exec.Command(c.Ralph, append([]string{"task"}, args...)...)
	cmd.Env = c.Env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.T.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// OK is Task that must succeed; it returns the output.
func (c *Client) OK(args ...string) string {
	c.T.Helper()
	out, errs, code := c.Task(args...)
	if code != 0 {
		c.T.Fatalf("ralph task %v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

// View is the task `ralph task ARGS… --json` answers with.
func (c *Client) View(args ...string) serve.TaskView {
	c.T.Helper()
	out := c.OK(append(args, "--json")...)
	var v serve.TaskView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		c.T.Fatalf("ralph task %v --json: %v\n%s", args, err, out)
	}
	return v
}

// Status is the session's task.
func (c *Client) Status(session string) serve.TaskView {
	c.T.Helper()
	return c.View("status", session)
}

// WaitFor polls the session's task until cond holds, for a minute at the
// most; the failure names what never happened and the task as last seen.
func (c *Client) WaitFor(session, what string, cond func(serve.TaskView) bool) serve.TaskView {
	c.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var v serve.TaskView
	for time.Now().Before(deadline) {
		v = c.Status(session)
		if cond(v) {
			return v
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.T.Fatalf("session %s: never %s; last: %+v", session, what, v)
	return v
}

// StateIs is the condition of WaitFor that the task is in state.
func StateIs(state string) func(serve.TaskView) bool {
	return func(v serve.TaskView) bool { return string(v.State) == state }
}

// API calls the daemon's HTTP API; token "" sends none.
func (c *Client) API(method, path, token, body string) (int, string) {
	c.T.Helper()
	code, b, err := Request(c.Addr, token, method, path, body)
	if err != nil {
		c.T.Fatal(err)
	}
	return code, string(b)
}

// A daemon that hangs fails the request instead of the test's deadline.
var client = &http.Client{Timeout: 30 * time.Second}

// Request makes one API request to the daemon at addr; token "" sends
// none. Only a request that gets no answer is an error.
func Request(addr, token, method, path, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Events collects the data lines of the API's event stream.
type Events struct {
	mu    sync.Mutex
	lines []string
}

// Events follows GET /api/events until the test ends.
func (c *Client) Events(token string) *Events {
	c.T.Helper()
	req, _ := http.NewRequest("GET", "http://"+c.Addr+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	// No timeout: the stream is read for as long as the test runs.
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		c.T.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	c.T.Cleanup(func() { resp.Body.Close() })
	e := &Events{}
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

// WaitFor reports whether a line containing sub came within d.
func (e *Events) WaitFor(sub string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		e.mu.Lock()
		for _, l := range e.lines {
			if strings.Contains(l, sub) {
				e.mu.Unlock()
				return true
			}
		}
		e.mu.Unlock()
	}
	return false
}

// Lines are the data lines of the stream so far.
func (e *Events) Lines() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}
