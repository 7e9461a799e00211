// Command fakeagent is a scripted stand-in for an agent CLI in tests of the
// runner, the adapters and the loop (`ralph run` testscripts): every run is
// one agent call that plays the next iteration of the script named by
// $RALPH_FAKE_SCRIPT and records the arguments it got. See package
// ralph/internal/agent/fakeagent/script for the format.
//
// Build it with `go build ralph/internal/agent/fakeagent` (or script.Build)
// and point --agent-cmd / CLAUDE_CODE_CMD at the binary.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"ralph/internal/agent/fakeagent/script"
)

// envRole marks the fake's own background grandchild.
const envRole = "RALPH_FAKE_ROLE"

func main() {
	switch os.Getenv(envRole) {
	case "grandchild":
		grandchild(false)
	case "grandchild-ignore-term":
		grandchild(true)
	}
	code, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		code = script.ExitScriptError
	}
	os.Exit(code)
}

// grandchild sleeps until killed, like `sleep 1000 &` started by a tool.
func grandchild(ignoreTerm bool) {
	if ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	for {
		time.Sleep(time.Hour)
	}
}

func run() (int, error) {
	path := os.Getenv(script.EnvScript)
	if path == "" {
		return 0, fmt.Errorf("$%s is not set", script.EnvScript)
	}
	s, err := script.Load(path)
	if err != nil {
		return 0, err
	}
	call, err := nextCall(path)
	if err != nil {
		return 0, err
	}
	idx := call - 1
	if idx >= len(s.Iterations) {
		if !s.RepeatLast || len(s.Iterations) == 0 {
			return 0, fmt.Errorf("script %s has %d iterations; this is call %d", path, len(s.Iterations), call)
		}
		idx = len(s.Iterations) - 1
	}
	it := s.Iterations[idx]
	if it.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	cwd, _ := os.Getwd()
	return play(it, filepath.Dir(path), newVars(call, cwd, lastArg()))
}

// vars fills the placeholders: raw in text, JSON-escaped inside JSON
// values so that a quote in a path or prompt keeps the line valid JSON.
type vars struct{ text, json *strings.Replacer }

func newVars(call int, cwd, prompt string) vars {
	esc := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	}
	n := strconv.Itoa(call)
	// The account a call runs under (a daemon's accounts) shows in its
	// output and files.
	dir := os.Getenv("CLAUDE_CONFIG_DIR")
	return vars{
		text: strings.NewReplacer("{{call}}", n, "{{cwd}}", cwd, "{{prompt}}", prompt, "{{config_dir}}", dir),
		json: strings.NewReplacer("{{call}}", n, "{{cwd}}", esc(cwd), "{{prompt}}", esc(prompt), "{{config_dir}}", esc(dir)),
	}
}

func lastArg() string {
	if len(os.Args) < 2 {
		return ""
	}
	return os.Args[len(os.Args)-1]
}

// nextCall takes the next call number and records this call, under an
// exclusive lock so parallel loops sharing a script never get the same one.
func nextCall(path string) (int, error) {
	lock, err := os.OpenFile(script.LockPath(path), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return 0, fmt.Errorf("lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	n := 0
	if b, err := os.ReadFile(script.CounterPath(path)); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	n++
	// Temp file and rename: a reader never sees a half-written counter.
	tmp := script.CounterPath(path) + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, script.CounterPath(path)); err != nil {
		return 0, err
	}

	logPath := os.Getenv(script.EnvArgvLog)
	if logPath == "" {
		logPath = script.ArgvLog(path)
	}
	cwd, _ := os.Getwd()
	var names []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	rec, _ := json.Marshal(script.Call{Call: n, Args: os.Args[1:], Dir: cwd, EnvNames: names, TraceParent: os.Getenv("TRACEPARENT")})
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Write(append(rec, '\n')); err != nil {
		return 0, err
	}
	return n, nil
}

func play(it script.Iteration, scriptDir string, v vars) (int, error) {
	if it.PIDFile != "" {
		if err := writeFile(it.PIDFile, strconv.Itoa(os.Getpid())+"\n"); err != nil {
			return 0, err
		}
	}
	if len(it.Gate) > 0 {
		if err := callGate(it.Gate); err != nil {
			return 0, err
		}
	}
	for name, content := range it.Files {
		if err := writeFile(v.text.Replace(name), v.text.Replace(content)); err != nil {
			return 0, err
		}
	}
	for name, content := range it.Append {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return 0, err
		}
		_, err = f.WriteString(v.text.Replace(content))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
	}
	for _, name := range it.Remove {
		if err := os.RemoveAll(name); err != nil {
			return 0, err
		}
	}
	if it.SpawnGrandchild {
		if err := spawnGrandchild(it); err != nil {
			return 0, err
		}
	}

	out := bufio.NewWriter(os.Stdout)
	line := func(s string) error {
		if _, err := out.WriteString(s); err != nil {
			return err
		}
		if it.LineDelay > 0 {
			if err := out.Flush(); err != nil {
				return err
			}
			time.Sleep(time.Duration(it.LineDelay))
		}
		return nil
	}
	if it.Stdout != "" {
		for l := range strings.Lines(v.text.Replace(it.Stdout)) {
			if err := line(l); err != nil {
				return 0, err
			}
		}
	}
	for _, raw := range it.StdoutLines {
		if err := line(stdoutLine(raw, v) + "\n"); err != nil {
			return 0, err
		}
	}
	if it.StdoutFile != "" {
		p := it.StdoutFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(scriptDir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		for l := range strings.Lines(string(b)) {
			if err := line(l); err != nil {
				return 0, err
			}
		}
	}
	if err := out.Flush(); err != nil {
		return 0, err
	}
	if it.Stderr != "" {
		io.WriteString(os.Stderr, v.text.Replace(it.Stderr))
	}
	if it.Sleep > 0 {
		time.Sleep(time.Duration(it.Sleep))
	}
	if it.WaitFile != "" {
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(it.WaitFile); err == nil {
				break
			}
		}
	}
	return it.ExitCode, nil
}

// stdoutLine prints a JSON string as its text and any other value compact,
// so a script can hold stream-json events as readable JSON.
func stdoutLine(raw json.RawMessage, v vars) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return v.text.Replace(s)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return v.json.Replace(string(raw))
	}
	return v.json.Replace(buf.String())
}

func spawnGrandchild(it script.Iteration) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	role := "grandchild"
	if it.GrandchildIgnoresSIGTERM {
		role = "grandchild-ignore-term"
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envRole+"="+role)
	// Inherited stdout and stderr, as a shell's `cmd &` would: the pipe
	// stays open while it lives, which the runner must cope with.
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	if it.GrandchildPIDFile != "" {
		return writeFile(it.GrandchildPIDFile, strconv.Itoa(cmd.Process.Pid)+"\n")
	}
	return nil
}

func writeFile(name, content string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, []byte(content), 0o644)
}

// callGate calls the gate's tools through the bridge, as an agent's CLI
// started with ralph's --mcp-config does.
func callGate(calls []script.GateCall) error {
	bridge := os.Getenv("RALPH_MCP_BRIDGE")
	if bridge == "" {
		return errors.New("the script calls the gate, but this call has none ($RALPH_MCP_BRIDGE is not set)")
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "fakeagent", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bridge, "mcp-bridge")}, nil)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	defer sess.Close()
	for _, c := range calls {
		var args map[string]any
		if err := json.Unmarshal(c.Input, &args); err != nil {
			return fmt.Errorf("gate %s: input: %w", c.Tool, err)
		}
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args})
		if err != nil {
			return fmt.Errorf("gate %s: %w", c.Tool, err)
		}
		var text strings.Builder
		for _, part := range res.Content {
			if t, ok := part.(*mcp.TextContent); ok {
				text.WriteString(t.Text)
			}
		}
		if c.ResultFile == "" {
			continue
		}
		f, err := os.OpenFile(c.ResultFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(f, strings.ReplaceAll(text.String(), "\n", " "))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
