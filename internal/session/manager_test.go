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
	return NewManager(st, DefaultExpiry, c.now), st, c
}

// TestManagerLifecycle walks one project through the session's life:
// first run, a new session, resumption with a changing id, expiry, a
// manual reset.
func TestManagerLifecycle(t *testing.T) {
	m, st, c := newManager(t)

	s, err := m.Start(1)
	if err != nil || s.Resume.ID != "" || s.Ralph.ID == "" || !s.Ralph.StartedAt.Equal(t0) || len(s.Transitions) != 0 {
		t.Fatalf("first start: %+v, %v", s, err)
	}
	ralphID := s.Ralph.ID

	out, err := m.Record("sess-1", false, 1)
	if err != nil || len(out.Transitions) != 1 || out.Transitions[0].Reason != ReasonNew || out.Transitions[0].From != StateReset {
		t.Fatalf("record: %+v, %v", out, err)
	}
	c.t = t0.Add(time.Hour)
	s, err = m.Start(2)
	if err != nil || s.Resume.ID != "sess-1" || !s.Resume.CreatedAt.Equal(t0) || s.Ralph.ID != ralphID {
		t.Fatalf("resume: %+v, %v", s, err)
	}

	// Resuming gave a new id back: the conversation, and its age, go on.
	if out, err := m.Record("sess-2", true, 2); err != nil || len(out.Transitions) != 0 {
		t.Fatalf("record resumed: %+v, %v", out, err)
	}
	if cur, _ := Load(st.AgentSessionFile()); cur.ID != "sess-2" || !cur.CreatedAt.Equal(t0) {
		t.Fatalf("after resumed record: %+v", cur)
	}

	c.t = t0.Add(DefaultExpiry)
	s, err = m.Start(3)
	if err != nil || s.Resume.ID != "" || len(s.Transitions) != 1 || s.Transitions[0].Reason != ReasonExpired ||
		len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "sess-2 expired") {
		t.Fatalf("expiry: %+v, %v", s, err)
	}
	if _, err := os.Stat(st.AgentSessionFile()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("expired session file still there: %v", err)
	}
	if s.Ralph.ResetCount != 1 || s.Ralph.LastResetReason != ReasonExpired {
		t.Fatalf("ralph session after expiry: %+v", s.Ralph)
	}

	if _, err := m.Record("sess-3", false, 3); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Minute)
	out, err = m.Reset(ReasonManual, 0)
	if err != nil || len(out.Transitions) != 1 || out.Transitions[0].From != StateActive || out.Transitions[0].To != StateReset {
		t.Fatalf("reset: %+v, %v", out, err)
	}
	if _, err := os.Stat(st.AgentSessionFile()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("reset left the session file")
	}
	r, _ := LoadRalph(st.RalphSessionFile())
	if r.ID != ralphID || r.ResetCount != 2 || r.LastResetReason != ReasonManual || !r.LastUsed.Equal(c.t) {
		t.Fatalf("ralph session: %+v", r)
	}

	h, err := m.History()
	want := []struct {
		reason   Reason
		from, to State
		loop     int
	}{
		{ReasonNew, StateReset, StateActive, 1}, {ReasonExpired, StateActive, StateReset, 3},
		{ReasonNew, StateReset, StateActive, 3}, {ReasonManual, StateActive, StateReset, 0},
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

func TestManagerRecordWithoutResume(t *testing.T) {
	m, st, c := newManager(t)
	if _, err := m.Record("a", false, 1); err != nil {
		t.Fatal(err)
	}
	c.t = t0.Add(time.Hour)
	tests := []struct {
		name        string
		id          string
		resumed     bool
		wantCreated time.Time
		wantTrans   int
	}{
		{"same id back from a fresh call keeps its age", "a", false, t0, 0},
		{"a different id from a fresh call is a new session", "b", false, t0.Add(time.Hour), 1},
		{"empty id changes nothing", "", false, t0.Add(time.Hour), 0},
	}
	for _, tt := range tests {
		out, err := m.Record(tt.id, tt.resumed, 2)
		if err != nil || len(out.Transitions) != tt.wantTrans {
			t.Fatalf("%s: %+v, %v", tt.name, out, err)
		}
		if cur, _ := Load(st.AgentSessionFile()); !cur.CreatedAt.Equal(tt.wantCreated) {
			t.Errorf("%s: created %v, want %v", tt.name, cur.CreatedAt, tt.wantCreated)
		}
	}
	if _, err := m.Record("has space", false, 2); err == nil {
		t.Error("recorded an invalid id")
	}
}

func TestManagerRecoversCorruptFiles(t *testing.T) {
	tests := []struct {
		name       string
		file       func(*store.Store) string
		content    string
		wantReason Reason // transition Start records, "" for none
		wantNewID  bool
	}{
		{"agent session", (*store.Store).AgentSessionFile, `{"session_id": "x", `, ReasonCorrupt, false},
		{"ralph session", (*store.Store).RalphSessionFile, `{"ralph_session_id": 1}`, "", true},
		{"history", (*store.Store).SessionHistoryFile, `[{"at": "x"`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, st, _ := newManager(t)
			first, err := m.Start(1)
			if err != nil {
				t.Fatal(err)
			}
			p := tt.file(st)
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := m.Start(2)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], p+":") || !strings.Contains(s.Notes[0], "corrupt") {
				t.Fatalf("notes %q", s.Notes)
			}
			kept, _ := filepath.Glob(p + ".corrupt-*")
			if len(kept) != 1 {
				t.Fatalf("corrupt copy: %v", kept)
			}
			if b, _ := os.ReadFile(kept[0]); string(b) != tt.content {
				t.Errorf("kept %q", b)
			}
			if got := len(s.Transitions) > 0; got != (tt.wantReason != "") ||
				(got && s.Transitions[0].Reason != tt.wantReason) {
				t.Errorf("transitions %+v", s.Transitions)
			}
			if (s.Ralph.ID != first.Ralph.ID) != tt.wantNewID {
				t.Errorf("ralph session id %s → %s", first.Ralph.ID, s.Ralph.ID)
			}
			if _, err := m.Start(3); err != nil { // and the state is healthy again
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

// A project last run by the bash tool: its files are read, the session is
// resumed, and the next writes use the current format.
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

	s, err := m.Start(1)
	if err != nil || s.Resume.ID != "legacy-id" || !s.Resume.Legacy || s.Ralph.ID != "ralph-1-2" {
		t.Fatalf("start: %+v, %v", s, err)
	}
	if _, err := m.Record("legacy-id", true, 1); err != nil {
		t.Fatal(err)
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
// .ralph_session as it is (two writes an iteration otherwise); a longer
// move, or any other change, writes it.
func TestManagerLastUsedStep(t *testing.T) {
	m, st, c := newManager(t)
	if _, err := m.Start(1); err != nil {
		t.Fatal(err)
	}
	stat := func() os.FileInfo {
		t.Helper()
		info, err := os.Stat(st.RalphSessionFile())
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	first := stat()
	c.t = c.t.Add(lastUsedStep / 2)
	if _, err := m.Start(2); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Record("sess-1", false, 2); err != nil { // a new session: written
		t.Fatal(err)
	}
	afterNew := stat()
	if os.SameFile(first, afterNew) {
		t.Fatal("a new agent session did not write the ralph session")
	}
	c.t = c.t.Add(lastUsedStep / 2)
	if _, err := m.Start(3); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Record("sess-1", true, 3); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(afterNew, stat()) {
		t.Error("the ralph session was rewritten for a last-used time that moved by less than a step")
	}
	c.t = c.t.Add(lastUsedStep)
	if _, err := m.Start(4); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRalph(st.RalphSessionFile())
	if err != nil || !r.LastUsed.Equal(c.t) {
		t.Errorf("last used %v (%v), want %v", r.LastUsed, err, c.t)
	}
}
