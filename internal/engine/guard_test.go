package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/gitx"
	"ralph/internal/loop"
)

// A sandboxed loop pins the project's git before the first call; an agent
// that changed what host git would run (here .git/config) stops the run
// at the next git, with the file named: not a failed call for the breaker,
// not a second call.
func TestEngineStopsOnAChangedGitControlFile(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	h := newHarness(t, openPlanMD, []call{
		{out: result("Working."+block("IN_PROGRESS", false, "PASSING"), ""),
			files: map[string]string{"x.go": "package x\n"}},
		{out: result("again", "")},
	}, func(s *Spec) { s.Sandboxed = true })
	h.agent.calls[0].during = func() {
		cfg := filepath.Join(h.dir, ".git", "config")
		b, _ := os.ReadFile(cfg)
		os.WriteFile(cfg, append(b, []byte("[core]\n\tfsmonitor = touch "+marker+"\n")...), 0o644)
	}
	res, err := h.engine.Run(context.Background())
	var te *gitx.TamperError
	if !errors.As(err, &te) || te.File != filepath.Join(h.dir, ".git", "config") {
		t.Fatalf("Run: %v, want a TamperError naming .git/config", err)
	}
	if res.ExitCode != 1 || h.agent.n != 1 {
		t.Errorf("exit %d after %d calls, want 1 after 1", res.ExitCode, h.agent.n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the planted fsmonitor ran")
	}
	var said bool
	for _, ev := range h.events {
		said = said || ev.Type == loop.EventError && strings.Contains(ev.Message, ".git/config changed")
	}
	if st := h.status(t); !said || st.Status != "stopped" || !strings.Contains(st.LastAction, ".git/config changed") || st.Breaker.State != "CLOSED" {
		t.Errorf("error event %v, status %+v", said, st)
	}
	if _, ok := gitx.Pinned(h.dir); ok {
		t.Error("the project is still pinned after the run")
	}
}

// Without a sandbox nothing is pinned: an unconfined agent can do anything
// anyway, and the user's own changes to .git/config go on working.
func TestEngineUnsandboxedPinsNothing(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{
		{out: result("Working."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"x.go": "package x\n"}},
	}, func(s *Spec) { s.Policy.Budget.MaxLoops = 1 })
	h.agent.calls[0].during = func() {
		if _, ok := gitx.Pinned(h.dir); ok {
			t.Error("pinned without a sandbox")
		}
		cfg := filepath.Join(h.dir, ".git", "config")
		b, _ := os.ReadFile(cfg)
		os.WriteFile(cfg, append(b, []byte("[user]\n\tname = x\n")...), 0o644)
	}
	if res := h.run(t); h.agent.n != 1 || res.Reason == "" {
		t.Errorf("%+v after %d calls", res, h.agent.n)
	}
}
