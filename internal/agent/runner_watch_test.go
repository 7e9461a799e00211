package agent

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
)

// TestRunStderrLines: stderr reaches OnStderrLine line by line while the
// file still gets every byte, next to a live stdout.
func TestRunStderrLines(t *testing.T) {
	p := fakeProc(t, script.Iteration{Stdout: "out\n", Stderr: "level=INFO one\r\nlevel=ERROR two\nno newline"})
	var mu sync.Mutex
	var out, errs []string
	p.OnLine = func(l []byte) { mu.Lock(); out = append(out, string(l)); mu.Unlock() }
	p.OnStderrLine = func(l []byte) { mu.Lock(); errs = append(errs, string(l)); mu.Unlock() }
	res, err := testRunner().Run(context.Background(), p)
	if err != nil || res.ExitCode != 0 || res.Aborted != "" || len(res.Warnings) > 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(errs, "|"); got != "level=INFO one|level=ERROR two|no newline" {
		t.Errorf("stderr lines = %q", errs)
	}
	if len(out) != 1 || out[0] != "out" {
		t.Errorf("stdout lines = %q", out)
	}
	if got := readFile(t, p.StderrPath); got != "level=INFO one\r\nlevel=ERROR two\nno newline" {
		t.Errorf("stderr file = %q", got)
	}
}

// TestRunAbort: a watcher that reads a line on stderr stops the whole
// group at once, TERM first and KILL for what ignores it, and the result
// says why without calling it a timeout or an interrupt.
func TestRunAbort(t *testing.T) {
	tests := []struct {
		name       string
		ignoreTERM bool
		reason     string // sent on the channel; "" closes it instead
		wantReason string
		wantExit   int
	}{
		{"TERM", false, "usage limit", "usage limit", 128 + int(syscall.SIGTERM)},
		{"KILL after grace", true, "usage limit", "usage limit", 128 + int(syscall.SIGKILL)},
		{"closed channel", false, "", "aborted by a watcher", 128 + int(syscall.SIGTERM)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := fakeProc(t, script.Iteration{
				Stderr: "starting\nstream error: rate limit\n", Sleep: script.Duration(time.Hour),
				IgnoreSIGTERM: tt.ignoreTERM, PIDFile: "agent.pid",
				SpawnGrandchild: true, GrandchildIgnoresSIGTERM: tt.ignoreTERM, GrandchildPIDFile: "grandchild.pid",
			})
			p.Timeout = time.Minute
			abort := make(chan string, 1)
			p.Abort = abort
			p.OnStderrLine = func(l []byte) {
				if !strings.Contains(string(l), "rate limit") {
					return
				}
				if tt.reason == "" {
					close(abort)
					return
				}
				select {
				case abort <- tt.reason:
				default:
				}
			}
			start := time.Now()
			res, err := testRunner().Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			tree := readPIDTree(t, p.Dir)
			if res.Aborted != tt.wantReason || res.TimedOut || res.Interrupted || res.ExitCode != tt.wantExit {
				t.Errorf("result = %+v, want aborted (%q) with exit %d", res, tt.wantReason, tt.wantExit)
			}
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("took %v", elapsed)
			}
			tree.checkGone(t)
			if got := readFile(t, p.StderrPath); got != "starting\nstream error: rate limit\n" {
				t.Errorf("stderr file = %q", got)
			}
		})
	}
}

// TestRunAbortAfterExit: a reason that comes when the process has ended by
// itself stops nothing, and the result does not claim it did.
func TestRunAbortAfterExit(t *testing.T) {
	p := proc(t, "/bin/sh", "-c", "echo bye >&2")
	abort := make(chan string, 1)
	p.Abort = abort
	p.OnStderrLine = func([]byte) {}
	res, err := testRunner().Run(context.Background(), p)
	abort <- "too late"
	if err != nil || res.ExitCode != 0 || res.Aborted != "" || res.TimedOut || res.Interrupted {
		t.Errorf("result = %+v, %v", res, err)
	}
}
