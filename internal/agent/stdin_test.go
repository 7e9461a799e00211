package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestRunStdin(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 256<<10) // 4 MiB: far past a pipe's buffer
	tests := []struct {
		name, script string
		stdin        io.Reader
		wantOut      string
	}{
		{"fed to the agent", "cat; echo done", strings.NewReader("the prompt\n"), "the prompt\ndone\n"},
		{"default is /dev/null", "cat; echo done", nil, "done\n"},
		{"empty reader", "cat; echo done", strings.NewReader(""), "done\n"},
		{"large input read whole", "wc -c", strings.NewReader(big), "4194304\n"},
		// Exiting without reading must not hold the call open.
		{"agent ignores its stdin", "echo ignored", strings.NewReader(big), "ignored\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := proc(t, "/bin/sh", "-c", tt.script)
			p.Stdin = tt.stdin
			start := time.Now()
			res, err := testRunner().Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || len(res.Warnings) != 0 {
				t.Errorf("result %+v", res)
			}
			if got := strings.TrimLeft(readFile(t, p.StdoutPath), " "); got != tt.wantOut {
				t.Errorf("stdout %q, want %q", got, tt.wantOut)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestRunStdinEscapedReader: a process that left the group keeps the stdin
// pipe open without reading; the call still ends once the group is gone.
func TestRunStdinEscapedReader(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	// The shell waits for the pid file so the child has left the group
	// (setsid may fork first) before the shell exits.
	p := proc(t, "/bin/sh", "-c", `exec 3<&0; setsid sh -c 'echo $$ > escaped.pid; exec sleep 3' <&3 >/dev/null 2>&1 &
		while [ ! -s escaped.pid ]; do sleep 0.01; done`)
	p.Stdin = strings.NewReader(strings.Repeat("x", 1<<20))
	start := time.Now()
	res, err := testRunner().Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("waited %v for a process outside the group", d)
	}
	if res.ExitCode != 0 || len(res.Warnings) != 0 {
		t.Errorf("result %+v", res)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestRunStdinReadError(t *testing.T) {
	p := proc(t, "/bin/sh", "-c", "cat >/dev/null")
	p.Stdin = io.MultiReader(bytes.NewReader([]byte("part")), failingReader{})
	res, err := testRunner().Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "disk on fire") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestRunStdinStartError(t *testing.T) {
	p := proc(t, "ralph-no-such-agent")
	p.Stdin = strings.NewReader("x")
	if _, err := testRunner().Run(context.Background(), p); err == nil {
		t.Fatal("started a missing command")
	}
}
