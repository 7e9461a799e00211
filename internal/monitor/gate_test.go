package monitor

import (
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// fakeResponder records what the dashboard's keys decided.
type fakeResponder struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeResponder) Decide(id string, allow, forRun bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "decide "+id+" "+map[bool]string{true: "allow", false: "deny"}[allow]+map[bool]string{true: " run", false: ""}[forRun])
	return nil
}

func (f *fakeResponder) Answer(id, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "answer "+id+" "+text)
	return nil
}

func gateModel(t *testing.T, items ...Prompt) (*Model, *fakeResponder) {
	t.Helper()
	r := &fakeResponder{}
	feed := NewFeed()
	m := NewModel(Options{Title: "webshop", NoColor: true, Now: fixedNow, Responder: r, Feed: feed})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	feed.Pending(items)
	m.Update(feed.drain())
	return m, r
}

// An approval shows above the panels; a, t and d decide the oldest one,
// other keys stay the dashboard's.
func TestDashboardDecidesAnApproval(t *testing.T) {
	for key, want := range map[string]string{"a": "decide a1 allow", "t": "decide a1 allow run", "d": "decide a1 deny"} {
		m, r := gateModel(t, Prompt{ID: "a1", Kind: PromptApproval, What: "Bash(npm test)"}, Prompt{ID: "a2", Kind: PromptApproval, What: "Write(x)"})
		view := m.View()
		if !strings.Contains(view, "The agent asks to run (a1): Bash(npm test) (+1 more waiting)") || !strings.Contains(view, "a allow once  t allow for this run  d deny") {
			t.Fatalf("the view:\n%s", view)
		}
		press(m, key)
		if got := strings.Join(r.calls, ","); got != want {
			t.Errorf("%s decided %q, want %q", key, got, want)
		}
	}
	m, r := gateModel(t, Prompt{ID: "a1", Kind: PromptApproval, What: "Bash(npm test)"})
	if press(m, "l"); m.mode != modeLog || len(r.calls) != 0 {
		t.Errorf("l while an approval waits: mode %v, calls %v", m.mode, r.calls)
	}
}

// A question takes typed text, q included (no quit), Backspace edits and
// Enter sends; once nothing waits the keys are the dashboard's again.
func TestDashboardAnswersAQuestion(t *testing.T) {
	m, r := gateModel(t, Prompt{ID: "q1", Kind: PromptQuestion, What: "Which database?", Options: []string{"sqlite", "postgres"}})
	if view := m.View(); !strings.Contains(view, "The agent asks (q1): Which database?") || !strings.Contains(view, "options: sqlite / postgres") {
		t.Fatalf("the view:\n%s", view)
	}
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter}); cmd != nil || len(r.calls) != 0 {
		t.Error("Enter with nothing typed sent an answer")
	}
	for _, k := range []string{"p", "g", "x", "q"} {
		if msg := press(m, k); msg != nil {
			if _, quit := msg.(tea.QuitMsg); quit {
				t.Fatalf("%q quit the dashboard while typing an answer", k)
			}
		}
	}
	m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	m.Update(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	press(m, "sql")
	if view := m.View(); !strings.Contains(view, "answer> pg sql") {
		t.Errorf("the typed answer:\n%s", view)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("Enter sent nothing")
	}
	m.Update(cmd())
	if got := strings.Join(r.calls, ","); got != "answer q1 pg sql" {
		t.Errorf("answered %q", got)
	}
	feed := m.opts.Feed
	feed.Pending(nil)
	m.Update(feed.drain())
	if strings.Contains(m.View(), "The agent asks") {
		t.Error("the question still shows once nothing waits")
	}
	if msg := press(m, "q"); msg == nil {
		t.Error("q no longer quits once nothing waits")
	}
}
