package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/scarce"
	"ralph/internal/store"
)

// fullStore is a .ralph store whose disk is full for the next `full` saves
// of an iteration's record.
type fullStore struct {
	*store.Store
	full    int
	records []int // the loops of the records saved
}

func (s *fullStore) SaveState(st loop.State, rec *loop.Metrics) error {
	if rec != nil && s.full > 0 {
		s.full--
		return fmt.Errorf("write state: %w", &fs.PathError{Op: "write", Path: s.RalphDir() + "/.ralph_state", Err: syscall.ENOSPC})
	}
	if rec != nil {
		s.records = append(s.records, rec.Loop)
	}
	return s.Store.SaveState(st, rec)
}

func (h *harness) waits(kind string) []Event {
	var out []Event
	for _, ev := range h.events {
		if ev.Type == EventWait && ev.WaitKind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// A full disk while the iteration's record is saved: the loop waits with
// the reason, retries with a growing back-off, and goes on once space is
// back; the record is saved once and nothing is counted twice.
func TestEngineWaitsForDiskSpaceToSaveTheIteration(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{
		{out: result("Added login."+block("IN_PROGRESS", false, "PASSING"), ""), files: map[string]string{"login.go": "x"},
			plan: strings.Replace(openPlanMD, "- [ ] Add login", "- [x] Add login", 1)},
		{out: result("All done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"logout.go": "x"}, plan: donePlanMD},
	}, nil)
	fs := &fullStore{Store: h.engine.deps.Store.(*store.Store), full: 3}
	h.engine.deps.Store = fs
	var during []store.Status
	h.clock.onSleep = func() {
		if st, err := store.ReadStatus(filepath.Join(h.dir, ".ralph", "status.json")); err == nil {
			during = append(during, st)
		}
	}
	res := h.run(t)
	if res.Reason != reason.ProjectComplete || res.Loops != 2 || h.agent.n != 2 {
		t.Fatalf("result %+v after %d calls", res, h.agent.n)
	}
	if fmt.Sprint(fs.records) != "[1 2]" {
		t.Errorf("records saved for loops %v, want [1 2]", fs.records)
	}
	want := []time.Duration{scarce.Backoff(0), scarce.Backoff(1), scarce.Backoff(2)}
	if got := h.clock.sleeps[1:4]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sleeps %v, want the back-off %v after the first call", h.clock.sleeps, want)
	}
	waits := h.waits(loop.WaitResources)
	if len(waits) != 1 || !strings.Contains(waits[0].Message, "disk full writing ") || !strings.HasSuffix(waits[0].Message, "; retrying") {
		t.Errorf("wait events %+v, want one naming the file", waits)
	}
	// during[0] is the first call's: the fake agent's work is a sleep.
	if len(during) < 2 || during[1].Wait == nil || during[1].Wait.Kind != loop.WaitResources || during[1].Status != "waiting" ||
		!strings.HasPrefix(during[1].LastAction, "waiting: disk full writing ") || during[1].LoopCount != 1 {
		t.Errorf("status while waiting: %+v", during)
	}
	var resumed bool
	for _, ev := range h.events {
		resumed = resumed || ev.Type == loop.EventResumed
	}
	if !resumed {
		t.Error("no resumed event once the disk had space")
	}
	if st := h.status(t); st.LoopCount != 2 || st.CallsMadeThisHour != 2 || st.Breaker.State != "CLOSED" {
		t.Errorf("final status %+v", st)
	}
}

// Out of file descriptors when the agent starts, or a full disk for its
// output log: the call is not folded (the breaker counts nothing, the
// loop count does not move) and is made again after a back-off.
func TestEngineRetriesACallThatLackedResources(t *testing.T) {
	done := call{out: result("All done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"a.go": "x"}, plan: donePlanMD}
	for name, c := range map[string]call{
		"no descriptors to start": {runErr: &agent.StartError{Command: "fake", Err: &os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE}}},
		"no descriptors for logs": {runErr: &fs.PathError{Op: "open", Path: "/h/logs/x.log", Err: syscall.ENFILE}},
		"log not written":         {out: "", exit: 1, outputErr: &fs.PathError{Op: "write", Path: "/h/logs/x.log", Err: syscall.EDQUOT}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, openPlanMD, []call{c, c, done}, nil)
			res := h.run(t)
			if res.Reason != reason.ProjectComplete || res.Loops != 1 || h.agent.n != 3 {
				t.Fatalf("result %+v after %d calls; want project_complete at loop 1 after 3 calls", res, h.agent.n)
			}
			var backoff []time.Duration // without the fake agent's minutes of work
			for _, d := range h.clock.sleeps {
				if d != time.Minute {
					backoff = append(backoff, d)
				}
			}
			if fmt.Sprint(backoff) != fmt.Sprint([]time.Duration{time.Second, 2 * time.Second}) {
				t.Errorf("sleeps %v, want 1s then 2s before the third call", h.clock.sleeps)
			}
			if st := h.status(t); st.Breaker.State != "CLOSED" || st.CallsMadeThisHour != 1 {
				t.Errorf("status %+v: the failed starts were counted", st)
			}
			if len(h.waits(loop.WaitResources)) != 1 {
				t.Errorf("wait events %+v", h.waits(loop.WaitResources))
			}
		})
	}
}

// Ctrl-C during the wait ends the run as interrupted; what was saved
// before stays whole.
func TestEngineInterruptDuringAWaitForResources(t *testing.T) {
	enospc := &fs.PathError{Op: "open", Path: "/h/logs/x.log", Err: syscall.ENOSPC}
	h := newHarness(t, openPlanMD, []call{{runErr: enospc}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	h.clock.onSleep = cancel
	res, err := h.engine.Run(ctx)
	if err != nil || res.Reason != reason.Interrupted || res.Loops != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

// A shortage is not a configuration problem: other errors still end the
// run at once.
func TestEngineOtherStartErrorsStillFail(t *testing.T) {
	h := newHarness(t, openPlanMD, []call{{runErr: &agent.StartError{Command: "fake", Err: fs.ErrNotExist}}}, nil)
	res, err := h.engine.Run(context.Background())
	if err == nil || res.ExitCode != 1 || len(h.clock.sleeps) != 0 {
		t.Fatalf("Run = %+v, %v after sleeps %v", res, err, h.clock.sleeps)
	}
}

// git out of descriptors before or after the call: the call's progress
// is measured once git runs again, never taken for "nothing changed".
func TestEngineWaitsForGitToMeasureProgress(t *testing.T) {
	emfile := fmt.Errorf("git rev-parse: %w", &fs.PathError{Op: "fork/exec", Path: "/usr/bin/git", Err: syscall.EMFILE})
	done := call{out: result("All done."+block("COMPLETE", true, "PASSING"), ""), files: map[string]string{"a.go": "x"}, plan: donePlanMD}
	for name, which := range map[string]string{"before": "before", "after": "after"} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, openPlanMD, []call{done}, nil)
			failures := 2
			if which == "before" {
				snap := h.engine.deps.Snapshot
				h.engine.deps.Snapshot = func(ctx context.Context, dir string) (gitx.Snap, error) {
					if failures > 0 {
						failures--
						return gitx.Snap{}, emfile
					}
					return snap(ctx, dir)
				}
			} else {
				after := h.engine.deps.SnapshotAfter
				h.engine.deps.SnapshotAfter = func(ctx context.Context, dir string, before gitx.Snap) (gitx.Snap, error) {
					if failures > 0 {
						failures--
						return gitx.Snap{}, emfile
					}
					return after(ctx, dir, before)
				}
			}
			res := h.run(t)
			if res.Reason != reason.ProjectComplete || h.agent.n != 1 || failures != 0 {
				t.Fatalf("result %+v after %d calls, %d failures left", res, h.agent.n, failures)
			}
			for _, ev := range h.events {
				if ev.Type == EventWarning && strings.Contains(ev.Message, "git snapshot failed") {
					t.Errorf("progress measured without git: %s", ev.Message)
				}
			}
			if w := h.waits(loop.WaitResources); len(w) != 1 || !strings.Contains(w[0].Message, "out of file descriptors") {
				t.Errorf("waits %+v", w)
			}
		})
	}
}
