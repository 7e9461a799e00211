// Package script is the script format of the fake agent executable
// (ralph/internal/agent/fakeagent), shared by the fake and the tests that
// write scripts for it, plus a helper to build the fake.
//
// A script is a JSON file named by $RALPH_FAKE_SCRIPT. Each run of the fake
// is one agent call: it takes the next iteration (a call counter lives next
// to the script), records its arguments, and plays the iteration. Example:
//
//	{"iterations": [
//	  {"stdout_lines": [
//	     {"type": "system", "subtype": "init", "session_id": "sess-1", "cwd": "{{cwd}}"},
//	     {"type": "assistant", "message": {"content": [{"type": "text", "text": "Working."}]}},
//	     {"type": "result", "subtype": "success", "is_error": false, "session_id": "sess-1",
//	      "result": "---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---"}],
//	   "files": {"src/main.go": "package main\n"}},
//	  {"stdout": "{\"type\":\"result\",\"is_error\":true,\"result\":\"You've hit your limit · resets 9pm\"}\n",
//	   "exit_code": 1},
//	  {"sleep": "1h", "ignore_sigterm": true, "spawn_grandchild": true, "grandchild_pid_file": "gc.pid"}
//	]}
//
// After the run, <script>.argv.jsonl holds one Call per line, e.g.
// {"call":2,"args":["--output-format","json","--resume","sess-1",...],"dir":"/project"}.
package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Environment variables the fake reads.
const (
	// EnvScript names the script file (required).
	EnvScript = "RALPH_FAKE_SCRIPT"
	// EnvArgvLog overrides where calls are recorded (default: ArgvLog).
	EnvArgvLog = "RALPH_FAKE_ARGV_LOG"
)

// ExitScriptError is the fake's exit status when it cannot play its script
// (unreadable, exhausted), chosen to stand out from scripted codes.
const ExitScriptError = 97

// Script is the whole scenario: one Iteration per agent call, in order.
type Script struct {
	Iterations []Iteration `json:"iterations"`
	// RepeatLast replays the last iteration once the list is used up;
	// otherwise an extra call fails with ExitScriptError.
	RepeatLast bool `json:"repeat_last,omitempty"`
}

// Iteration is what one call does, in this order: write Files and Append,
// remove Remove, start the grandchild, print Stdout / StdoutLines /
// StdoutFile, print Stderr, sleep, exit with ExitCode. Text output and the
// names and content of Files may contain {{call}} (1-based call number), {{cwd}}, {{prompt}} (the last
// argument) and {{config_dir}} ($CLAUDE_CONFIG_DIR: the account).
type Iteration struct {
	Stdout string `json:"stdout,omitempty"`
	// StdoutLines are printed one per line: a JSON string as its text, any
	// other JSON value compacted (stream-json events).
	StdoutLines []json.RawMessage `json:"stdout_lines,omitempty"`
	// StdoutFile is copied to stdout; relative to the script's directory
	// (a captured transcript).
	StdoutFile string `json:"stdout_file,omitempty"`
	// LineDelay pauses after every stdout line (live-view tests).
	LineDelay Duration `json:"line_delay,omitempty"`
	Stderr    string   `json:"stderr,omitempty"`
	ExitCode  int      `json:"exit_code,omitempty"`
	// Sleep waits after printing, before exiting (timeouts, cancellation).
	Sleep Duration `json:"sleep,omitempty"`
	// WaitFile waits, after printing, until this file exists (at most a
	// minute): a test holds the call until it has done what must happen
	// while the call runs, however slow the machine. Relative to the
	// working directory.
	WaitFile string `json:"wait_file,omitempty"`

	// Gate calls ralph's gate (its MCP tools ask and approve) first, in
	// order, through the bridge ralph gave the call ($RALPH_MCP_BRIDGE),
	// and waits for each result as an agent's CLI does: a question or a
	// decision that waits for a person holds the call.
	Gate []GateCall `json:"gate,omitempty"`

	// Files are created or overwritten, Append appended to (created if
	// missing), Remove deleted; paths relative to the working directory.
	Files  map[string]string `json:"files,omitempty"`
	Append map[string]string `json:"append,omitempty"`
	Remove []string          `json:"remove,omitempty"`

	// IgnoreSIGTERM makes the fake survive SIGTERM (only SIGKILL stops it).
	IgnoreSIGTERM bool `json:"ignore_sigterm,omitempty"`
	// PIDFile receives the fake's pid.
	PIDFile string `json:"pid_file,omitempty"`

	// SpawnGrandchild starts a background process that sleeps for ever and
	// inherits stdout, like `sleep 1000 &` in a tool call; the fake does not
	// wait for it. Its pid goes to GrandchildPIDFile when set.
	SpawnGrandchild          bool   `json:"spawn_grandchild,omitempty"`
	GrandchildIgnoresSIGTERM bool   `json:"grandchild_ignores_sigterm,omitempty"`
	GrandchildPIDFile        string `json:"grandchild_pid_file,omitempty"`
}

// GateCall is one call of a gate's tool: Tool is "ask" or "approve",
// Input its arguments ({"question":…,"options":[…]}, or {"tool_name":
// "Bash","input":{"command":…}}). The tool's result text is appended to
// ResultFile (relative to the working directory), one line per call.
type GateCall struct {
	Tool       string          `json:"tool"`
	Input      json.RawMessage `json:"input"`
	ResultFile string          `json:"result_file"`
}

// Call is one recorded invocation of the fake, a line of the argv log.
type Call struct {
	Call int      `json:"call"` // 1-based
	Args []string `json:"args"` // os.Args[1:]
	Dir  string   `json:"dir"`
	// EnvNames are the names (never the values) of its environment.
	EnvNames []string `json:"env_names"`
	// TraceParent is its $TRACEPARENT, the W3C trace context of the call
	// (ids only, no secret).
	TraceParent string `json:"traceparent,omitempty"`
}

// Duration reads from JSON as a Go duration string ("1.5s") or a number of
// seconds.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		*d = Duration(v)
		return err
	}
	secs, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("duration %s: want a string like \"2s\" or a number of seconds", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// Counter, lock and default argv log live next to the script, so parallel
// tests each get their own by using their own script file.

// CounterPath is the call counter of a script.
func CounterPath(script string) string { return script + ".calls" }

// LockPath serialises concurrent calls of the fake on one script.
func LockPath(script string) string { return script + ".lock" }

// ArgvLog is where calls are recorded unless $RALPH_FAKE_ARGV_LOG says.
func ArgvLog(script string) string { return script + ".argv.jsonl" }

// Write saves the script to path.
func (s Script) Write(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Load reads a script file.
func Load(path string) (Script, error) {
	var s Script
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Calls reads the recorded calls of a script, oldest first.
func Calls(script string) ([]Call, error) {
	b, err := os.ReadFile(ArgvLog(script))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var calls []Call
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var c Call
		if err := dec.Decode(&c); err != nil {
			return calls, err
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// Build compiles the fake agent into dir and returns its path. Call it once
// per test binary (TestMain) or per test; the Go build cache keeps it fast.
func Build(dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out := filepath.Join(dir, "fakeagent")
	cmd := exec.Command(goBin, "build", "-o", out, "ralph/internal/agent/fakeagent")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fake agent: %v\n%s", err, b)
	}
	return out, nil
}

// Main is a TestMain body for a package whose tests run the fake agent:
// it builds it once into a temporary directory, sets *bin to its path, runs
// the tests and removes it again. The result is the exit code.
func Main(m interface{ Run() int }, bin *string) int {
	dir, err := os.MkdirTemp("", "ralph-fakeagent-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
