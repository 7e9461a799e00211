package monitor

import (
	"fmt"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"ralph/internal/agent"
	"ralph/internal/loop"
)

// Messages. Each carries what an I/O command found, so Update stays pure.
type (
	tickMsg     time.Time
	snapshotMsg struct {
		snap  Snapshot
		live  []agent.LiveEvent
		reset bool // the live events belong to a new iteration
	}
	feedMsg struct {
		items      []feedItem
		dropped    int
		pending    []Prompt
		hasPending bool
	}
	controlMsg struct {
		action string
		err    error
	}
)

type mode int

const (
	modeDashboard mode = iota
	modeLog
	modeHelp
)

// How long notes stay in the status line.
const (
	noteTTL  = 8 * time.Second
	errorTTL = 20 * time.Second
	// logViewLines is how much of ralph.log the full log view keeps.
	logViewLines = 5000
)

// Model is the dashboard's bubbletea model.
type Model struct {
	opts   Options
	loader *Loader
	follow *follower // nil in process: live output comes from the Feed
	st     styles
	done   <-chan struct{}

	width, height int
	now           time.Time
	snap          Snapshot
	have          bool // a snapshot has arrived
	act           activity

	loading, dirty bool // one load in flight at a time; dirty asks for another

	mode      mode
	confirm   bool // asking whether to reset the breaker
	note      string
	noteErr   bool
	noteUntil time.Time
	logOff    int  // first line shown by the log view
	logFollow bool // the log view sticks to the end
	logCache  wrapCache

	interrupted bool

	// pending is what the agent's call waits on (gate.go); typed is the
	// answer being typed to its question.
	pending []Prompt
	typed   string
}

// NewModel returns the dashboard for opts; Run is the usual way to show it.
func NewModel(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	r := lipgloss.NewRenderer(out)
	if opts.NoColor {
		r.SetColorProfile(termenv.Ascii)
	}
	m := &Model{
		opts: opts, loader: NewLoader(opts.Source), st: newStyles(r),
		width: 80, height: 24, now: opts.Now(), logFollow: true,
	}
	if opts.Feed == nil {
		dir := ""
		if s := opts.Source.Store; s != nil {
			dir = s.ProjectDir()
		}
		m.follow = newFollower(opts.Parser, dir)
	}
	return m
}

// Init starts the clock, the first load and, in process, the feed.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(tick(), m.refresh(), m.waitFeed())
}

func tick() tea.Cmd {
	// Aligned to the wall clock, so the seconds shown change together.
	return tea.Every(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// refresh starts a load unless one is in flight, in which case another
// follows it: changes are never missed, and loads never pile up.
func (m *Model) refresh() tea.Cmd {
	if m.loading {
		m.dirty = true
		return nil
	}
	m.loading = true
	l, f, now := m.loader, m.follow, m.opts.Now
	lines := l.src.LogLines
	if m.mode == modeLog {
		lines = max(lines, logViewLines)
	}
	return func() tea.Msg {
		snap := l.load(now(), lines)
		msg := snapshotMsg{snap: snap}
		if f != nil {
			msg.live, msg.reset = f.poll(snap.IterationLog)
		}
		return msg
	}
}

func (m *Model) waitFeed() tea.Cmd {
	feed, done := m.opts.Feed, m.done
	if feed == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-feed.wake:
			return feed.drain()
		case <-done: // nil outside Run: the program's end drops the command
			return nil
		}
	}
}

// Update folds one message into the model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.clampLog()
	case tickMsg:
		m.now = time.Time(msg)
		if m.note != "" && !m.noteUntil.After(m.now) {
			m.note = ""
		}
		return m, tea.Batch(tick(), m.refresh())
	case snapshotMsg:
		m.loading = false
		m.apply(msg)
		if m.dirty {
			m.dirty = false
			return m, m.refresh()
		}
	case feedMsg:
		m.applyFeed(msg)
		return m, tea.Batch(m.waitFeed(), m.refresh())
	case controlMsg:
		m.controlDone(msg)
		return m, m.refresh()
	case gateMsg:
		m.gateDone(msg)
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Model) apply(msg snapshotMsg) {
	prev, had := m.snap, m.have
	snap := msg.snap
	m.snap, m.have = snap, true
	if snap.At.After(m.now) {
		m.now = snap.At
	}
	started := snap.Loop.Status.StartedAt
	switch {
	case !had:
	case !started.IsZero() && !started.Equal(prev.Loop.Status.StartedAt):
		// In process the feed's own start event clears the activity, in
		// order with the output; a snapshot read late must not wipe the
		// output of the call that is running now.
		if m.opts.Feed == nil {
			m.act.reset()
		}
		m.setNote("a new run started", false)
	case snap.Loop.Dead && !prev.Loop.Dead:
		m.setNote("the loop's process is gone", true)
	case prev.Loop.Active() && snap.Loop.Known && !snap.Loop.Active() && !snap.Loop.Dead:
		m.setNote("the loop stopped: "+orDash(snap.Loop.Status.ExitReason), false)
	}
	if msg.reset {
		m.act.reset()
	}
	m.act.add(msg.live...)
	if m.mode == modeLog {
		m.clampLog()
	}
}

func (m *Model) applyFeed(msg feedMsg) {
	if msg.hasPending {
		m.setPending(msg.pending)
	}
	if msg.dropped > 0 {
		m.act.add(agent.LiveEvent{Kind: agent.LiveOutput, Text: fmt.Sprintf("… %d lines of output skipped", msg.dropped)})
	}
	for _, it := range msg.items {
		if !it.isEvent {
			m.act.add(it.live)
			continue
		}
		switch ev := it.event; ev.Type {
		case loop.EventStart, loop.EventIterationStart:
			m.act.reset() // what came before belongs to an earlier call
		case loop.EventWarning:
			m.setNote("warning: "+clean(ev.Message), true)
		}
	}
}

func (m *Model) setNote(s string, isErr bool) {
	m.note, m.noteErr = s, isErr
	ttl := noteTTL
	if isErr {
		ttl = errorTTL
	}
	m.noteUntil = m.now.Add(ttl)
}
