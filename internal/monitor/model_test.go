package monitor

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"ralph/internal/agent"
	"ralph/internal/loop"
)

// fakeControl records the requests; err makes every call fail.
type fakeControl struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (f *fakeControl) record(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
	return f.err
}
func (f *fakeControl) Pause() error        { return f.record(actPause) }
func (f *fakeControl) Resume() error       { return f.record(actResume) }
func (f *fakeControl) Stop() error         { return f.record(actStop) }
func (f *fakeControl) ResetBreaker() error { return f.record(actReset) }

func (f *fakeControl) got() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, ",")
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// press sends a key and runs the command it returns, the way the program
// would: control requests come back as their results.
func press(m *Model, k string) tea.Msg {
	_, cmd := m.Update(keyMsg(k))
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if cm, ok := msg.(controlMsg); ok {
		m.Update(cm)
	}
	return msg
}

func controlled(t *testing.T, s Snapshot) (*Model, *fakeControl) {
	t.Helper()
	fc := &fakeControl{}
	m := NewModel(Options{Control: fc, NoColor: true, Now: fixedNow})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	feedSnap(m, s)
	return m, fc
}

func footer(m *Model) string {
	v := m.View()
	return v[strings.LastIndexByte(v, '\n')+1:]
}

func TestPauseToggles(t *testing.T) {
	m, fc := controlled(t, runningSnap())
	press(m, "p")
	if fc.got() != "pause" {
		t.Fatalf("calls %q", fc.got())
	}
	if f := footer(m); !strings.Contains(f, "pause requested: the loop pauses after this iteration") {
		t.Errorf("footer %q", f)
	}
	// The loop has not paused yet: the request shows, and p takes it back.
	s := runningSnap()
	s.Loop.PauseRequested = true
	feedSnap(m, s)
	if v := m.View(); !strings.Contains(v, "pausing after this iteration") {
		t.Errorf("pending pause not shown:\n%s", v)
	}
	press(m, "p")
	feedSnap(m, pausedSnap())
	press(m, "p")
	if fc.got() != "pause,resume,resume" {
		t.Fatalf("calls %q", fc.got())
	}
}

func TestStop(t *testing.T) {
	m, fc := controlled(t, runningSnap())
	press(m, "s")
	if fc.got() != "stop" || !strings.Contains(footer(m), "stop requested: the loop stops after this iteration") {
		t.Fatalf("calls %q, footer %q", fc.got(), footer(m))
	}
	s := runningSnap()
	s.Loop.StopRequested = true
	feedSnap(m, s)
	if !strings.Contains(m.View(), "stopping after this iteration") {
		t.Error("pending stop not shown")
	}

	m, fc = controlled(t, stoppedSnap())
	press(m, "s")
	if fc.got() != "" || !strings.Contains(footer(m), "no loop is running") {
		t.Fatalf("stop on a stopped loop: calls %q, footer %q", fc.got(), footer(m))
	}
}

func TestResetBreakerAsksFirst(t *testing.T) {
	m, fc := controlled(t, runningSnap())
	press(m, "r")
	if m.confirm || fc.got() != "" || !strings.Contains(footer(m), "CLOSED: nothing to reset") {
		t.Fatalf("closed breaker: confirm %v, calls %q, footer %q", m.confirm, fc.got(), footer(m))
	}

	m, fc = controlled(t, breakerOpenSnap())
	press(m, "r")
	if !m.confirm || !strings.Contains(footer(m), "reset the circuit breaker? y/n") {
		t.Fatalf("no question: %q", footer(m))
	}
	press(m, "n")
	if m.confirm || fc.got() != "" {
		t.Fatalf("n: confirm %v calls %q", m.confirm, fc.got())
	}
	press(m, "r")
	press(m, "q") // any other answer is no, and does not quit
	if m.confirm || fc.got() != "" {
		t.Fatalf("q while asking: confirm %v calls %q", m.confirm, fc.got())
	}
	press(m, "r")
	press(m, "y")
	if fc.got() != "reset" || !strings.Contains(footer(m), "circuit breaker reset") {
		t.Fatalf("y: calls %q footer %q", fc.got(), footer(m))
	}
}

func TestControlErrorsShow(t *testing.T) {
	m, fc := controlled(t, runningSnap())
	fc.err = errors.New("write .ralph/.control: permission denied")
	press(m, "s")
	if f := footer(m); !strings.Contains(f, "stop failed: write .ralph/.control: permission denied") {
		t.Fatalf("footer %q", f)
	}
	// Notes expire with the clock.
	m.Update(tickMsg(t0.Add(time.Minute)))
	if f := footer(m); strings.Contains(f, "failed") {
		t.Fatalf("note kept: %q", f)
	}
}

func TestReadOnlyView(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, breakerOpenSnap())
	for _, k := range []string{"p", "r"} {
		press(m, k)
		if f := footer(m); !strings.Contains(f, readOnlyNote) {
			t.Errorf("%s: footer %q", k, f)
		}
	}
}

func TestQuitKeys(t *testing.T) {
	m := newTestModel(80, 24)
	if _, ok := press(m, "q").(tea.QuitMsg); !ok || m.interrupted {
		t.Fatal("q does not quit quietly")
	}
	m = newTestModel(80, 24)
	if _, ok := press(m, "ctrl+c").(tea.QuitMsg); !ok || !m.interrupted {
		t.Fatal("ctrl+c does not quit as an interrupt")
	}
	m = newTestModel(80, 24)
	press(m, "?")
	if _, ok := press(m, "q").(tea.QuitMsg); !ok {
		t.Fatal("q does not quit from the help")
	}
}

func TestHelpAndLogViews(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, runningSnap())
	press(m, "?")
	if m.mode != modeHelp || !strings.Contains(m.View(), "reset an open circuit breaker") {
		t.Fatal("no help")
	}
	press(m, "x")
	if m.mode != modeDashboard {
		t.Fatal("help stays open")
	}

	if _, ok := press(m, "l").(snapshotMsg); !ok {
		t.Fatal("the log view does not load a longer tail")
	}
	m.loading = false
	if m.mode != modeLog {
		t.Fatal("no log view")
	}
	lines := m.logLines()
	end := len(lines) - m.logHeight()
	if m.logOff != end || !m.logFollow {
		t.Fatalf("log view opens at %d (follow %v), want the end %d", m.logOff, m.logFollow, end)
	}
	press(m, "up")
	press(m, "k")
	if m.logOff != end-2 || m.logFollow {
		t.Fatalf("after two lines up: %d follow %v", m.logOff, m.logFollow)
	}
	press(m, "g")
	if m.logOff != 0 || !strings.Contains(m.View(), fmt.Sprintf("1–22 of %d", len(lines))) {
		t.Fatalf("home: %d\n%s", m.logOff, m.View())
	}
	press(m, "pgdown")
	if m.logOff != 21 {
		t.Fatalf("page down: %d", m.logOff)
	}
	press(m, "G")
	if m.logOff != end || !m.logFollow {
		t.Fatalf("end: %d follow %v", m.logOff, m.logFollow)
	}
	// Following: new lines keep the view at the end.
	s := runningSnap()
	s.Log = append(s.Log, "one more", "and another")
	feedSnap(m, s)
	if m.logOff != end+2 {
		t.Fatalf("follow: %d, want %d", m.logOff, end+2)
	}
	press(m, "l")
	if m.mode != modeDashboard {
		t.Fatal("l does not close the log view")
	}
}

func TestResize(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, runningSnap(), liveSample()...)
	if strings.Contains(m.View(), "╭") {
		t.Fatal("boxes at 80 columns")
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	v := m.View()
	checkFits(t, v, 120, 40)
	if !strings.Contains(v, "╭─ Loop") {
		t.Fatal("no boxes at 120 columns")
	}
	m.Update(tea.WindowSizeMsg{Width: 50, Height: 10})
	checkFits(t, m.View(), 50, 10)
}

func TestNewRunResetsActivity(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, runningSnap(), liveSample()...)
	s := runningSnap()
	feedSnap(m, s, agent.LiveEvent{Kind: agent.LiveText, Text: "more"})
	if n := len(m.act.events); n != len(liveSample())+1 {
		t.Fatalf("%d events kept within one run", n)
	}
	s.Loop.Status.StartedAt = t0
	s.Loop.Status.LoopCount = 0
	feedSnap(m, s)
	if len(m.act.events) != 0 || !strings.Contains(footer(m), "a new run started") {
		t.Fatalf("new run: %d events, footer %q", len(m.act.events), footer(m))
	}
	// A new iteration log starts the activity afresh too.
	feedSnap(m, s, liveSample()...)
	m.loading = true
	m.Update(snapshotMsg{snap: s, live: liveSample()[:1], reset: true})
	if len(m.act.events) != 1 {
		t.Fatalf("new iteration: %d events", len(m.act.events))
	}
}

func TestLoopDied(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, runningSnap())
	s := runningSnap()
	s.Loop.Dead = true
	feedSnap(m, s)
	v := m.View()
	if !strings.Contains(v, "not running (last seen 14:00:50, 2m31s ago)") {
		t.Fatalf("dead loop not shown:\n%s", v)
	}
	if !strings.Contains(footer(m), "the loop's process is gone") {
		t.Errorf("footer %q", footer(m))
	}
	if strings.Contains(v, "Iteration 13") {
		t.Error("a dead loop still shows a running iteration")
	}
}

func TestLoopStops(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, runningSnap())
	feedSnap(m, stoppedSnap())
	if f := footer(m); !strings.Contains(f, "the loop stopped: project_complete") {
		t.Fatalf("footer %q", f)
	}
}

func TestWaitCountdown(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, waitingSnap())
	if v := m.View(); !strings.Contains(v, "usage limit · resets in 1h02m03s (at 15:05:24)") {
		t.Fatalf("no countdown:\n%s", v)
	}
	m.Update(tickMsg(t0.Add(time.Hour + 2*time.Minute)))
	if v := m.View(); !strings.Contains(v, "resets in 3s") || !strings.Contains(v, "15:05:24") {
		t.Fatalf("countdown does not move:\n%s", v)
	}
	m.Update(tickMsg(t0.Add(2 * time.Hour)))
	if v := m.View(); !strings.Contains(v, "resets in 0s") {
		t.Fatalf("countdown past its end:\n%s", v)
	}
}

func TestRefreshOneAtATime(t *testing.T) {
	m := newTestModel(80, 24)
	m.loading = false
	if m.refresh() == nil || !m.loading {
		t.Fatal("no load started")
	}
	if m.refresh() != nil || !m.dirty {
		t.Fatal("a second load started while one is in flight")
	}
	_, cmd := m.Update(snapshotMsg{snap: runningSnap()})
	if cmd == nil || m.dirty || !m.loading {
		t.Fatal("the pending refresh did not follow the load")
	}
	// The tick restarts the clock and refreshes, both in one batch.
	m.loading = false
	_, cmd = m.Update(tickMsg(t0.Add(time.Second)))
	if b, ok := cmd().(tea.BatchMsg); !ok || len(b) != 2 {
		t.Fatalf("tick: %#v", cmd())
	}
	if !m.now.Equal(t0.Add(time.Second)) {
		t.Fatal("clock not advanced")
	}
}

func TestFeedInProcess(t *testing.T) {
	feed := NewFeed()
	m := NewModel(Options{Feed: feed, NoColor: true, Now: fixedNow})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if m.follow != nil {
		t.Fatal("in process, iteration logs are not followed")
	}
	feedSnap(m, runningSnap())
	feed.Live(agent.LiveEvent{Kind: agent.LiveText, Text: "old call"})
	feed.Event(loop.Event{Type: loop.EventIterationStart, Loop: 13})
	feed.Live(agent.LiveEvent{Kind: agent.LiveTool, Tool: "Read", Target: "main.go"})
	feed.Event(loop.Event{Type: loop.EventWarning, Message: "git snapshot failed"})
	msg := m.waitFeed()()
	m.loading = false
	_, cmd := m.Update(msg)
	if cmd == nil {
		t.Fatal("no refresh or re-subscription")
	}
	if len(m.act.events) != 1 || m.act.events[0].Tool != "Read" {
		t.Fatalf("activity %+v", m.act.events)
	}
	if !strings.Contains(footer(m), "warning: git snapshot failed") {
		t.Errorf("footer %q", footer(m))
	}
}

func TestFeedBounds(t *testing.T) {
	f := NewFeed()
	f.Event(loop.Event{Type: loop.EventStart})
	for i := range maxFeedQueue + 10 {
		f.Live(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(rune('a' + i%26))})
	}
	f.Event(loop.Event{Type: loop.EventStop})
	msg := f.drain()
	if len(msg.items) != maxFeedQueue || msg.dropped != 12 {
		t.Fatalf("%d items, %d dropped", len(msg.items), msg.dropped)
	}
	if !msg.items[0].isEvent || !msg.items[len(msg.items)-1].isEvent {
		t.Fatal("start or stop dropped")
	}
	// Events alone: the oldest ordinary one gives way, start and stop stay.
	for range maxFeedQueue {
		f.Event(loop.Event{Type: loop.EventWarning})
	}
	f.Event(loop.Event{Type: loop.EventStop})
	if msg = f.drain(); len(msg.items) != maxFeedQueue || msg.items[len(msg.items)-1].event.Type != loop.EventStop {
		t.Fatalf("%d items", len(msg.items))
	}
}

func TestActivityIsBounded(t *testing.T) {
	var a activity
	for i := range 10 * activityCap {
		a.add(agent.LiveEvent{Kind: agent.LiveOutput, Text: string(rune('a' + i%26))})
		if len(a.events) > 2*activityCap {
			t.Fatalf("%d events held", len(a.events))
		}
	}
	if n := len(a.last()); n != activityCap {
		t.Fatalf("%d kept", n)
	}
}

func TestMissingStateShowsDashes(t *testing.T) {
	m := newTestModel(80, 24)
	feedSnap(m, Snapshot{At: t0, Loop: LoopInfo{Note: "status.json is corrupt (line 3)"},
		Breaker: BreakerInfo{Note: ".circuit_breaker_state is invalid"}})
	v := m.View()
	for _, want := range []string{"— (status.json is corrupt (line 3))", ".circuit_breaker_state is invalid", "no fix_plan.md", "no iterations yet"} {
		if !strings.Contains(v, want) {
			t.Errorf("missing %q in\n%s", want, v)
		}
	}
}

// In process the snapshot that first shows the run's start may be read
// after the feed has delivered the first call's output: it must not wipe it.
func TestFeedOutputSurvivesALateSnapshot(t *testing.T) {
	feed := NewFeed()
	m := NewModel(Options{Feed: feed, NoColor: true, Now: fixedNow})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	before := runningSnap()
	before.Loop.Status.StartedAt = time.Time{}
	feedSnap(m, before)
	feed.Event(loop.Event{Type: loop.EventStart})
	feed.Event(loop.Event{Type: loop.EventIterationStart, Loop: 1})
	feed.Live(agent.LiveEvent{Kind: agent.LiveTool, Tool: "Write", Target: "task1.txt"})
	m.loading = false
	m.Update(m.waitFeed()())
	feedSnap(m, runningSnap())
	if len(m.act.events) != 1 || m.act.events[0].Target != "task1.txt" {
		t.Fatalf("the running call's output is gone: %+v", m.act.events)
	}
}
