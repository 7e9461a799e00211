package monitor

import (
	tea "github.com/charmbracelet/bubbletea"

	"ralph/internal/breaker"
)

// Control actions, as controlMsg names them.
const (
	actPause  = "pause"
	actResume = "resume"
	actStop   = "stop"
	actReset  = "reset"
)

func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		m.interrupted = true
		return tea.Quit
	}
	if cmd, ok := m.gateKey(k); ok {
		return cmd
	}
	if m.confirm {
		m.confirm = false
		if s == "y" || s == "Y" {
			return m.control(actReset)
		}
		m.setNote("the circuit breaker is left as it is", false)
		return nil
	}
	if s == "q" {
		return tea.Quit
	}
	switch m.mode {
	case modeHelp:
		m.mode = modeDashboard // any key closes the help
		return nil
	case modeLog:
		if m.logKey(s) {
			return nil
		}
	}
	switch s {
	case "?":
		m.mode = modeHelp
	case "l":
		if m.mode == modeLog {
			m.mode = modeDashboard
			return m.refresh() // back to the short tail
		}
		m.mode, m.logFollow = modeLog, true
		m.clampLog()
		return m.refresh() // the full view keeps a longer tail
	case "esc":
		m.mode = modeDashboard
	case "p":
		if m.snap.Loop.Paused() || m.snap.Loop.PauseRequested {
			return m.control(actResume)
		}
		return m.control(actPause)
	case "s":
		if !m.snap.Loop.Active() {
			m.setNote("no loop is running", false)
			return nil
		}
		return m.control(actStop)
	case "r":
		b := m.snap.Breaker
		if !b.Known || b.State.Status != breaker.Open {
			state := "not open"
			if b.Known && b.State.Status != "" {
				state = string(b.State.Status)
			}
			m.setNote("the circuit breaker is "+state+": nothing to reset", false)
			return nil
		}
		if m.opts.Control == nil {
			m.setNote(readOnlyNote, true)
			return nil
		}
		m.confirm = true
	}
	return nil
}

const readOnlyNote = "read-only view: no control available"

// control runs one request as a command: it may touch files, and Update
// does no I/O.
func (m *Model) control(action string) tea.Cmd {
	c := m.opts.Control
	if c == nil {
		m.setNote(readOnlyNote, true)
		return nil
	}
	call := map[string]func() error{
		actPause: c.Pause, actResume: c.Resume, actStop: c.Stop, actReset: c.ResetBreaker,
	}[action]
	return func() tea.Msg { return controlMsg{action: action, err: call()} }
}

func (m *Model) controlDone(msg controlMsg) {
	if msg.err != nil {
		m.setNote(msg.action+" failed: "+clean(msg.err.Error()), true)
		return
	}
	switch msg.action {
	case actPause:
		switch l := m.snap.Loop; {
		case l.Running():
			m.setNote("pause requested: the loop pauses after this iteration", false)
		case l.Active():
			m.setNote("pause requested: the loop pauses before its next iteration", false)
		default:
			m.setNote("pause requested: the next run starts paused", false)
		}
	case actResume:
		m.setNote("resume requested", false)
	case actStop:
		if m.snap.Loop.Running() {
			m.setNote("stop requested: the loop stops after this iteration", false)
		} else {
			m.setNote("stop requested", false)
		}
	case actReset:
		m.setNote("circuit breaker reset", false)
	}
}

// logKey scrolls the full log view; false means the key is not a scroll key.
func (m *Model) logKey(s string) bool {
	page := max(m.logHeight()-1, 1)
	switch s {
	case "up", "k":
		m.logOff--
	case "down", "j":
		m.logOff++
	case "pgup", "b":
		m.logOff -= page
	case "pgdown", "f", " ":
		m.logOff += page
	case "home", "g":
		m.logOff = 0
	case "end", "G":
		m.logOff = len(m.logLines())
	default:
		return false
	}
	m.logFollow = false
	m.clampLog()
	return true
}

// clampLog keeps the log view's offset in range; following sticks to the end.
func (m *Model) clampLog() {
	maxOff := max(len(m.logLines())-m.logHeight(), 0)
	if m.logFollow || m.logOff >= maxOff {
		m.logOff, m.logFollow = maxOff, true
	}
	m.logOff = max(m.logOff, 0)
}
