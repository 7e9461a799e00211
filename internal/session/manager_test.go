package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/store"
)

// clock is a settable time for the Manager.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newManager(t *testing.T) (*Manager, *store.Store, *clock) {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureDirs(); err != nil {
		t.Fatal(err)
	}
	c := &clock{t0}
	return NewManager(st, c.now), st, c
}

// TestManagerFollows walks one project's files through the changes the
// state's agent session goes through: a first session, the same one again,
// a new one, a reset.
func TestManagerFollows(t *testing.T) {
	m, st, c := newManager(t)
	s1 := Session{ID: "sess-1", CreatedAt: t0}
	out, err := m.Follow(s1, "", 1)
	if err != nil || len(out.Transitions) != 1 || out.Transitions[0].Reason != ReasonNew || out.Transitions[0].From != StateReset {
		t.Fatalf("first: %+v, %v", out, err)
	}
	if cur, _ := Load(st.AgentSessionFile()); cur.ID != "sess-1" || !cur.CreatedAt.Equal(t0) {
		t.Fatalf("view: %+v", cur)
	}
	r, _ := LoadRalph(st.RalphSessionFile())
	ralphID := r.ID
	if ralphID == "" || !r.StartedAt.Equal(t0) {
		t.Fatalf("ralph session: %+v", r)
	}

	c.t = t0.Add(time.Hour)
	if out, err := m.Follow(s1, "", 2); err != nil || len(out.Transitions) != 0 {
		t.Fatalf("the same session: %+v, %v", out, err)
	}
	out, err = m.Follow(Session{ID: "sess-2", CreatedAt: c.t}, "", 3)
	if err != nil || len(out.Transitions) != 1 || out.Transitions[0].From != StateActive {
		t.Fatalf("a new session: %+v, %v", out, err)
	}

	c.t = c.t.Add(time.Minute)
	out, err = m.Follow(Session{}, ReasonExpired, 4)
	if err != nil || len(out.Transitions) != 1 || out.Transitions[0].From != StateActive || out.Transitions[0].To != StateReset {
		t.Fatalf("reset: %+v, %v", out, err)
	}
	if _, err := os.Stat(st.AgentSessionFile()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("reset left the session file")
	}
	r, _ = LoadRalph(st.RalphSessionFile())
	if r.ID != ralphID || r.ResetCount != 1 || r.LastResetReason != ReasonExpired || !r.LastUsed.Equal(c.t) {
		t.Fatalf("ralph session: %+v", r)
	}

	h, err := m.History()
	want := []struct {
		reason   Reason
		from, to State
		loop     int
	}{
		{ReasonNew, StateReset, StateActive, 1}, {ReasonNew, StateActive, StateActive, 3}, {ReasonExpired, StateActive, StateReset, 4},
	}
	if err != nil || len(h) != len(want) {
		t.Fatalf("history %+v, %v", h, err)
	}
	for i, w := range want {
		if h[i].Reason != w.reason || h[i].From != w.from || h[i].To != w.to || h[i].Loop != w.loop {
			t.Errorf("history[%d] = %+v, want %+v", i, h[i], w)
		}
	}
}

func TestManagerRecoversCorruptFiles(t *testing.T) {
	tests := []struct {
		name      string
		file      func(*store.Store) string
		content   string
		wantNewID bool
	}{
		{"ralph session", (*store.Store).RalphSessionFile, `{"ralph_session_id": 1}`, true},
		{"history", (*store.Store).SessionHistoryFile, `[{"at": "x"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, st, _ := newManager(t)
			if _, err := m.Follow(Session{ID: "s1", CreatedAt: t0}, "", 1); err != nil {
				t.Fatal(err)
			}
			first, _ := LoadRalph(st.RalphSessionFile())
			p := tt.file(st)
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := m.Follow(Session{ID: "s2", CreatedAt: t0}, "", 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], p+":") || !strings.Contains(out.Notes[0], "corrupt") {
				t.Fatalf("notes %q", out.Notes)
			}
			kept, _ := filepath.Glob(p + ".corrupt-*")
			if len(kept) != 1 {
				t.Fatalf("corrupt copy: %v", kept)
			}
			if b, _ := os.ReadFile(kept[0]); string(b) != tt.content {
				t.Errorf("kept %q", b)
			}
			r, _ := LoadRalph(st.RalphSessionFile())
			if (r.ID != first.ID) != tt.wantNewID {
				t.Errorf("ralph session id %s → %s", first.ID, r.ID)
			}
			if _, err := m.Follow(Session{}, ReasonCompletion, 3); err != nil { // and the files are healthy again
				t.Fatal(err)
			}
		})
	}
}

func TestManagerHistoryBound(t *testing.T) {
	m, _, c := newManager(t)
	for i := range 60 {
		c.t = t0.Add(time.Duration(i) * time.Minute)
		if _, err := m.Reset(ReasonInterrupt, i); err != nil {
			t.Fatal(err)
		}
	}
	h, err := m.History()
	if err != nil || len(h) != HistoryLimit || h[0].Loop != 10 || h[HistoryLimit-1].Loop != 59 {
		t.Fatalf("%d entries, %v", len(h), err)
	}
}

// A project last run by the bash tool: its files are read, and the next
// writes use the current format.
func TestManagerBashToolFiles(t *testing.T) {
	m, st, c := newManager(t)
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(st.AgentSessionFile(), "legacy-id\n")
	mt := t0.Add(-2 * time.Hour)
	_ = os.Chtimes(st.AgentSessionFile(), mt, mt)
	write(st.RalphSessionFile(), `{"session_id":"ralph-1-2","created_at":"2025-01-01T00:00:00+00:00","last_used":"","reset_at":"","reset_reason":""}`)
	write(st.SessionHistoryFile(), `[{"timestamp":"2025-01-01T00:00:00+00:00","from_state":"active","to_state":"reset","reason":"manual_reset","loop_number":9}]`)

	old, err := Load(st.AgentSessionFile())
	if err != nil || old.ID != "legacy-id" || !old.Legacy || !old.CreatedAt.Equal(mt) {
		t.Fatalf("load: %+v, %v", old, err)
	}
	// The state adopted it (with its age) and the view follows.
	if _, err := m.Follow(Session{ID: old.ID, CreatedAt: old.CreatedAt}, "", 1); err != nil {
		t.Fatal(err)
	}
	if r, _ := LoadRalph(st.RalphSessionFile()); r.ID != "ralph-1-2" {
		t.Fatalf("ralph session %+v", r)
	}
	cur, err := Load(st.AgentSessionFile())
	if err != nil || cur.Legacy || !cur.CreatedAt.Equal(mt) {
		t.Fatalf("session not upgraded with its age: %+v, %v", cur, err)
	}
	c.t = t0.Add(time.Minute)
	if _, err := m.Reset(ReasonCompletion, 2); err != nil {
		t.Fatal(err)
	}
	h, _ := m.History()
	if len(h) != 2 || h[0].Loop != 9 || h[0].Reason != "manual_reset" || h[1].Reason != ReasonCompletion {
		t.Fatalf("history %+v", h)
	}
	b, _ := os.ReadFile(st.SessionHistoryFile())
	if strings.Contains(string(b), "loop_number") || !strings.Contains(string(b), `"loop": 9`) {
		t.Errorf("history not rewritten in the current form: %s", b)
	}
}

// Moving only the last-used time by less than lastUsedStep leaves
// .ralph_session as it is (a write an iteration otherwise); a longer move,
// or a change of session, writes it.
func TestManagerLastUsedStep(t *testing.T) {
	m, st, c := newManager(t)
	stat := func() os.FileInfo {
		t.Helper()
		info, err := os.Stat(st.RalphSessionFile())
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	s1 := Session{ID: "sess-1", CreatedAt: c.t}
	if _, err := m.Follow(s1, "", 1); err != nil {
		t.Fatal(err)
	}
	first := stat()
	c.t = c.t.Add(lastUsedStep / 2)
	if _, err := m.Follow(s1, "", 2); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(first, stat()) {
		t.Error("a last-used time moved by less than the step rewrote the ralph session")
	}
	c.t = c.t.Add(lastUsedStep)
	if _, err := m.Follow(s1, "", 3); err != nil {
		t.Fatal(err)
	}
	if os.SameFile(first, stat()) {
		t.Error("a last-used time moved by more than the step was not written")
	}
	later := stat()
	if _, err := m.Follow(Session{ID: "sess-2", CreatedAt: c.t}, "", 4); err != nil {
		t.Fatal(err)
	}
	if os.SameFile(later, stat()) {
		t.Error("a new agent session did not write the ralph session")
	}
}
