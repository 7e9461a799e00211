package monitor

import (
	"strconv"
	"strings"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
)

// A person at the dashboard answers the agent inside its call (ralph's
// gate, `ralph run --monitor`): each tool call outside the allow-list and
// each question the call waits on shows above the panels, oldest first,
// and takes the keys — a allows it once, t for the rest of the run, d
// denies; a question takes a typed answer, Enter sending it.

// Prompt is one thing the agent's call waits on.
type Prompt struct {
	ID      string   // a1, q2
	Kind    string   // PromptApproval or PromptQuestion
	What    string   // Bash(npm test); the question
	Options []string // a question's answers to choose from
}

// Kinds of Prompt.
const (
	PromptApproval = "approval"
	PromptQuestion = "question"
)

// Responder takes the person's decisions and answers. Its calls run on the
// dashboard's command goroutines and must not block for long.
type Responder interface {
	Decide(id string, allow, forRun bool) error
	Answer(id, text string) error
}

// maxAnswer bounds a typed answer, in bytes.
const maxAnswer = 2000

// gateMsg is a Responder call's outcome.
type gateMsg struct {
	id, what string
	err      error
}

// Pending tells the dashboard what the call waits on now (all of it, oldest
// first; none when nothing waits).
func (f *Feed) Pending(items []Prompt) {
	f.mu.Lock()
	f.pending, f.hasPending = append([]Prompt(nil), items...), true
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// current is the prompt the keys answer: the oldest.
func (m *Model) current() (Prompt, bool) {
	if len(m.pending) == 0 || m.opts.Responder == nil {
		return Prompt{}, false
	}
	return m.pending[0], true
}

// setPending folds a new list in; a typed answer stays while its question
// is still the one shown.
func (m *Model) setPending(items []Prompt) {
	before, had := m.current()
	m.pending = items
	if now, ok := m.current(); !had || !ok || now.ID != before.ID {
		m.typed = ""
	}
}

// gateKey handles a key while something waits; false leaves it to the
// dashboard's own keys.
func (m *Model) gateKey(k tea.KeyMsg) (tea.Cmd, bool) {
	p, ok := m.current()
	if !ok {
		return nil, false
	}
	r := m.opts.Responder
	if p.Kind == PromptQuestion {
		switch k.Type {
		case tea.KeyEnter:
			text := strings.TrimSpace(m.typed)
			if text == "" {
				m.setNote("type the answer first, then Enter", true)
				return nil, true
			}
			m.typed = ""
			return func() tea.Msg { return gateMsg{id: p.ID, what: "answered", err: r.Answer(p.ID, text)} }, true
		case tea.KeyBackspace:
			if _, size := utf8.DecodeLastRuneInString(m.typed); size > 0 {
				m.typed = m.typed[:len(m.typed)-size]
			}
			return nil, true
		case tea.KeyRunes, tea.KeySpace:
			add := string(k.Runes)
			if k.Type == tea.KeySpace {
				add = " "
			}
			if len(m.typed)+len(add) <= maxAnswer {
				m.typed += add
			}
			return nil, true
		}
		return nil, false
	}
	var allow, forRun bool
	var what string
	switch k.String() {
	case "a":
		allow, what = true, "allowed once"
	case "t":
		allow, forRun, what = true, true, "allowed for this run"
	case "d":
		what = "denied"
	default:
		return nil, false
	}
	return func() tea.Msg { return gateMsg{id: p.ID, what: what, err: r.Decide(p.ID, allow, forRun)} }, true
}

func (m *Model) gateDone(msg gateMsg) {
	if msg.err != nil {
		m.setNote(msg.id+": "+clean(msg.err.Error()), true)
		return
	}
	m.setNote(msg.id+" "+msg.what, false)
}

// promptLines show what waits, above the panels.
func (m *Model) promptLines(w int) []string {
	p, ok := m.current()
	if !ok {
		return nil
	}
	more := ""
	if n := len(m.pending) - 1; n > 0 {
		more = m.st.dim.Render(" (+" + strconv.Itoa(n) + " more waiting)")
	}
	var out []string
	if p.Kind == PromptQuestion {
		out = append(out, m.st.warn.Render("❓ The agent asks ("+p.ID+"): ")+clean(p.What)+more)
		if len(p.Options) > 0 {
			out = append(out, m.st.dim.Render("   options: ")+clean(strings.Join(p.Options, " / ")))
		}
		out = append(out, m.st.key.Render("   answer> ")+clean(m.typed)+"▏"+m.st.dim.Render("  (Enter sends)"))
	} else {
		out = append(out, m.st.warn.Render("⏸ The agent asks to run ("+p.ID+"): ")+clean(p.What)+more)
		out = append(out, "   "+m.st.key.Render("a")+" allow once  "+m.st.key.Render("t")+" allow for this run  "+m.st.key.Render("d")+" deny")
	}
	for i := range out {
		out[i] = fit(out[i], w)
	}
	return append(out, m.rule("", w))
}
