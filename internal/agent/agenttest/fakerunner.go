package agenttest

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"

	"ralph/internal/agent"
)

// FakeRunner is an agent.ProcessRunner for adapter tests: it runs nothing, keeps
// the Process it was given, writes canned output to the log files and
// feeds stdout to OnLine line by line, as the real Runner would.
type FakeRunner struct {
	Stdout, Stderr string
	Result         agent.ProcessResult
	// Err is returned instead of running (a start failure, say).
	Err error

	// Got is the last Process; GotStdin what its Stdin held.
	Got      agent.Process
	GotStdin []byte
}

// Run implements agent.ProcessRunner.
func (f *FakeRunner) Run(_ context.Context, p agent.Process) (agent.ProcessResult, error) {
	f.Got, f.GotStdin = p, nil
	if p.Stdin != nil {
		b, err := io.ReadAll(p.Stdin)
		if err != nil {
			return f.Result, err
		}
		f.GotStdin = b
	}
	if f.Err != nil {
		return f.Result, f.Err
	}
	for path, text := range map[string]string{p.StdoutPath: f.Stdout, p.StderrPath: f.Stderr} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return f.Result, err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return f.Result, err
		}
	}
	if p.OnLine != nil {
		for line := range bytes.Lines([]byte(f.Stdout)) {
			p.OnLine(bytes.TrimRight(line, "\r\n"))
		}
	}
	return f.Result, nil
}
