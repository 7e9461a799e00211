package serve

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/watchdog"
)

// fakeScreens plays tmux: a screen per target, or an error.
type fakeScreens struct {
	mu       sync.Mutex
	screens  map[string]string
	err      error
	captures int
}

func (f *fakeScreens) show(target, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.screens[target] = text
}

func (f *fakeScreens) Exists(_ context.Context, target string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.screens[target]
	return ok, f.err
}

func (f *fakeScreens) Capture(_ context.Context, target string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.captures++
	return f.screens[target], f.err
}

type notices struct {
	mu   sync.Mutex
	list []Notice
}

func (n *notices) Notify(x Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = append(n.list, x)
}

func (n *notices) kinds() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var k []string
	for _, x := range n.list {
		k = append(k, x.Kind)
	}
	return strings.Join(k, ",")
}

// kindsOnce are the kinds once they are want, or after five seconds:
// notices reach a notifier on its own goroutine.
func (n *notices) kindsOnce(want string) string {
	deadline := time.Now().Add(5 * time.Second)
	for n.kinds() != want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return n.kinds()
}

type watchRig struct {
	t       *testing.T
	d       *Daemon
	screens *fakeScreens
	notices *notices
	mem     map[string]*watchMemory
	dir     string
}

func newWatchRig(t *testing.T) *watchRig {
	t.Helper()
	dir := t.TempDir()
	for _, a := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, a...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", a, err, out)
		}
	}
	clock := t0
	var cmu sync.Mutex
	r := &watchRig{t: t, screens: &fakeScreens{screens: map[string]string{}}, notices: &notices{}, mem: map[string]*watchMemory{}, dir: dir}
	d, err := Open(Options{Home: Home(t.TempDir()), Sessions: []Session{{Name: "5", Dir: dir}}, Notifier: r.notices,
		Now: func() time.Time {
			cmu.Lock()
			defer cmu.Unlock()
			clock = clock.Add(time.Second)
			return clock
		},
		Watch: WatchOptions{Screens: r.screens, Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	r.d = d
	return r
}

func (r *watchRig) look() WatchStatus {
	r.t.Helper()
	r.d.watchOnce(context.Background(), r.mem)
	w, ok := r.d.watch.get("5")
	if !ok {
		r.t.Fatal("no board entry for session 5")
	}
	return w
}

func (r *watchRig) status() TaskView {
	r.t.Helper()
	v, err := r.d.Status("5")
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

func block(words, status string, exit bool) string {
	return fmt.Sprintf("⏺ %s\n\n  ---RALPH_STATUS---\n  STATUS: %s\n  EXIT_SIGNAL: %v\n  FILES_MODIFIED: 1\n  ---END_RALPH_STATUS---\n\n╭────╮\n│ >  │\n╰────╯\n", words, status, exit)
}

// A task left to an interactive agent: each status block becomes an
// iteration (history, task file), a ticked item counts as progress, and
// EXIT_SIGNAL: true ends the task, archived and announced.
func TestWatchdogFollowsTheAgent(t *testing.T) {
	r := newWatchRig(t)
	ctx := context.Background()
	if w := r.look(); w.Active || !strings.Contains(w.Message, "no task") {
		t.Errorf("before a task: %+v", w)
	}
	v, err := r.d.Do(ctx, fleet.Command{Verb: fleet.Start, Session: "5", Title: "Add auth", Who: fleet.Who{Surface: fleet.SurfaceCLI}})
	if err != nil {
		t.Fatal(err)
	}
	if w := r.look(); w.Active || w.Message != "no tmux session claude-5" || w.TaskID != v.ID {
		t.Errorf("without tmux session: %+v", w)
	}
	r.screens.show("claude-5", "$ claude\n")
	if w := r.look(); !w.Active || w.Target != "claude-5" {
		t.Errorf("an empty screen: %+v", w)
	}
	if a := r.status().Activity; a != "watched: tmux claude-5" {
		t.Errorf("activity %q", a)
	}
	evs, stop := r.d.hub.subscribe()
	defer stop()

	// The agent breaks the task down, ticks an item, writes a file and
	// prints its block.
	tf := r.status().TaskFile
	data, _ := os.ReadFile(tf)
	os.WriteFile(tf, []byte(strings.Replace(string(data), "## RALPH_STATUS", "- [x] model\n- [ ] login\n\n## RALPH_STATUS", 1)), 0o644)
	os.WriteFile(filepath.Join(r.dir, "model.go"), []byte("package auth\n"), 0o644)
	r.screens.show("claude-5", block("Wrote the model.", "IN_PROGRESS", false))
	r.look()
	if h := r.status().History; len(h) != 0 {
		t.Fatalf("taken at its first sight: %+v", h)
	}
	w := r.look()
	v = r.status()
	if len(v.History) != 1 || v.History[0].Loop != 1 || v.History[0].StatusBlock["STATUS"] != "IN_PROGRESS" || v.History[0].FilesModified != 1 {
		t.Fatalf("history: %+v", v.History)
	}
	if v.State != "waiting" || v.LoopCount != 1 || v.CircuitBreaker.State != "CLOSED" || v.CircuitBreaker.LastProgressLoop != 1 {
		t.Errorf("task: %+v", v)
	}
	if w.Status != "IN_PROGRESS" || w.Seen.IsZero() {
		t.Errorf("board: %+v", w)
	}
	if f := string(mustRead(t, tf)); !strings.Contains(f, "**Status:** IN_PROGRESS") || !strings.Contains(f, "EXIT_SIGNAL: false") || !strings.Contains(f, "- [x] model") {
		t.Errorf("task file:\n%s", f)
	}
	r.look()
	if n := len(r.status().History); n != 1 {
		t.Errorf("the same block recorded %d times", n)
	}
	var types []string
	r.d.bus.Flush(5 * time.Second) // the stream is the bus's observer
	for len(evs) > 0 {
		types = append(types, (<-evs).Type)
	}
	if s := strings.Join(types, ","); !strings.Contains(s, "watchdog_checklist") || !strings.Contains(s, "watchdog_status") {
		t.Errorf("events: %s", s)
	}

	r.screens.show("claude-5", block("Wrote the model.", "IN_PROGRESS", false)+"\n> go on\n\n"+block("All done.", "COMPLETE", true))
	r.look()
	if w := r.look(); w.Active || !strings.Contains(w.Message, "is done") {
		t.Errorf("the board after the look that ended the task: %+v", w)
	}
	v = r.status()
	if v.State != "done" || v.ExitReason != "project_complete" || len(v.History) != 2 || v.History[1].StatusBlock["EXIT_SIGNAL"] != "true" {
		t.Fatalf("after EXIT_SIGNAL: true: %+v", v)
	}
	if !strings.Contains(v.TaskFile, filepath.Join("archive", "5-"+v.ID+"-task.md")) || !strings.Contains(string(mustRead(t, v.TaskFile)), "**Status:** DONE") {
		t.Errorf("archived: %s", v.TaskFile)
	}
	if k := r.notices.kindsOnce(NoticeDone); k != NoticeDone {
		t.Errorf("notices: %s", k)
	}
	if w := r.look(); w.Active || !strings.Contains(w.Message, "is done") || r.screens.captures != 6 {
		t.Errorf("after the task (%d captures): %+v", r.screens.captures, w)
	}
}

// A session whose task a loop drives is not read at all; neither is one
// without tmux.
func TestWatchdogLeavesLoopsAlone(t *testing.T) {
	r := newWatchRig(t)
	ctx := context.Background()
	r.d.Do(ctx, fleet.Command{Verb: fleet.Start, Session: "5", Title: "Loop it", Who: fleet.Who{Surface: fleet.SurfaceCLI}})
	r.screens.show("claude-5", block("Done.", "COMPLETE", true))
	tk, _ := r.d.db.CurrentTask("5")
	tk.State = "queued"
	r.d.db.UpdateTask(tk)
	for range 3 {
		if w := r.look(); w.Active || w.Message != "a loop worker drives this session" {
			t.Fatalf("queued: %+v", w)
		}
	}
	if r.screens.captures != 0 || r.status().State != "queued" {
		t.Errorf("%d captures; state %s", r.screens.captures, r.status().State)
	}
	r.screens.err = watchdog.ErrNoTmux
	tk.State = "waiting"
	r.d.db.UpdateTask(tk)
	if w := r.look(); w.Active || w.Message != "tmux not installed" {
		t.Errorf("without tmux: %+v", w)
	}
}

// Blocks that show no progress (nothing changed in the repository, no
// item ticked) open the breaker as a loop's iterations would: the task
// halts and says so; the same block on the screen at the first look (left
// from before) is not counted.
func TestWatchdogBreaker(t *testing.T) {
	r := newWatchRig(t)
	r.screens.show("claude-5", block("An old answer.", "IN_PROGRESS", false))
	r.d.Do(context.Background(), fleet.Command{Verb: fleet.Start, Session: "5", Title: "Spin", Who: fleet.Who{Surface: fleet.SurfaceCLI}})
	r.look()
	r.look()
	if h := r.status().History; len(h) != 0 {
		t.Fatalf("the old block was taken: %+v", h)
	}
	screen := ""
	for i := 1; i <= 3; i++ {
		screen += block(fmt.Sprintf("Looked around, round %d.", i), "IN_PROGRESS", false)
		r.screens.show("claude-5", screen)
		r.look()
		r.look()
	}
	v := r.status()
	if v.State != "halted" || v.ExitReason != "circuit_breaker_open" || v.CircuitBreaker.State != "OPEN" || len(v.History) != 3 {
		t.Fatalf("after three idle blocks: %+v", v)
	}
	if k := r.notices.kindsOnce(NoticeHalted); k != NoticeHalted {
		t.Errorf("notices: %s", k)
	}
	if w := r.look(); w.Active || !strings.Contains(w.Message, "ralph task reset 5") {
		t.Errorf("board: %+v", w)
	}
}

// A session's target follows the pattern, named as tmux names sessions.
func TestWatchTarget(t *testing.T) {
	for _, tc := range []struct{ pattern, session, want string }{
		{"", "5", "claude-5"},
		{"", "api.v2", "claude-api_v2"},
		{"work:{session}", "5", "work:5"},
	} {
		if got := (WatchOptions{Target: tc.pattern}).target(tc.session); got != tc.want {
			t.Errorf("%q %q: %q, want %q", tc.pattern, tc.session, got, tc.want)
		}
	}
}
