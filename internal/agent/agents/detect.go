package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// DetectTimeout bounds one `<agent> --version`: a CLI that wants to log
// in or update first must not hold up a doctor or version command, yet the
// Gemini CLI's Node bundle alone takes over 2 s to start on a small machine.
// The agents are asked in parallel, so this is also the whole wait.
const DetectTimeout = 10 * time.Second

// Found is what Detect learnt about one agent.
type Found struct {
	Name string
	// Command is the executable looked up; Path where it was found.
	Command, Path string
	// Version is the version number it printed, e.g. "2.1.329".
	Version string
	// Err says why the agent is not usable: not found, --version failed
	// or timed out, or printed no version.
	Err error
}

// version matches the first version number in `--version` output:
// "2.1.329 (Claude Code)", "codex-cli 0.169.0", "0.61.0".
var version = regexp.MustCompile(`\b\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?\b`)

// Detect looks up each agent's default executable with lookPath
// (exec.LookPath in production) and asks it for its version, all at once,
// each bounded by DetectTimeout and ctx, with stdin from /dev/null. The
// command agent has no default executable and is not listed.
func Detect(ctx context.Context, lookPath func(string) (string, error)) []Found {
	var found []Found
	for _, name := range Names() {
		if cmd := DefaultCommand(name); cmd != "" {
			found = append(found, Found{Name: name, Command: cmd})
		}
	}
	var wg sync.WaitGroup
	for i := range found {
		f := &found[i]
		path, err := lookPath(f.Command)
		if err != nil {
			f.Err = fmt.Errorf("%s not found: %w", f.Command, err)
			continue
		}
		f.Path = path
		wg.Go(func() { f.Version, f.Err = askVersion(ctx, path) })
	}
	wg.Wait()
	return found
}

func askVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, DetectTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Stdin = nil // /dev/null: a CLI that reads a non-terminal stdin must not wait on ours
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own group, killed whole on timeout: a wrapper script's children
	// must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Stop waiting for output a process that left the group still holds.
	cmd.WaitDelay = 500 * time.Millisecond
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s --version did not answer: %w", path, ctx.Err())
	}
	if err != nil {
		return "", fmt.Errorf("%s --version: %w%s", path, err, firstLine(stderr.Bytes()))
	}
	for _, out := range [][]byte{stdout.Bytes(), stderr.Bytes()} {
		if v := version.Find(out); v != nil {
			return string(v), nil
		}
	}
	return "", errors.New(path + " --version printed no version number")
}

func firstLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	if len(b) == 0 {
		return ""
	}
	return " (" + string(b) + ")"
}
