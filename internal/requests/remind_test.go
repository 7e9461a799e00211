package requests

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// fakeConv is a conversation that keeps what was posted, idempotent by
// marker like the real ones.
type fakeConv struct {
	mu    sync.Mutex
	posts []fakePost
	// remindCalls counts reminder posts asked for, repeats included: the
	// store, not the marker, is what keeps it to one.
	remindCalls int
}

type fakePost struct{ marker, text string }

func (c *fakeConv) Post(_ context.Context, _ Request, marker, text string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(marker, "ralph:remind:") {
		c.remindCalls++
	}
	for i, p := range c.posts {
		if marker != "" && p.marker == marker {
			return string(rune('a' + i)), nil
		}
	}
	c.posts = append(c.posts, fakePost{marker, text})
	return string(rune('a' + len(c.posts) - 1)), nil
}

func (c *fakeConv) Edit(context.Context, Request, string, string, string) error { return nil }

func (c *fakeConv) reminders() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range c.posts {
		if strings.Contains(p.marker, "ralph:remind:") {
			out = append(out, p.text)
		}
	}
	return out
}

func TestReminder(t *testing.T) {
	waiting := func(id string, loop int, qs ...string) serve.TaskView {
		return serve.TaskView{ID: id, State: fleet.Waiting, LoopCount: loop, Questions: qs}
	}
	running := serve.TaskView{ID: "t1", State: fleet.Running, LoopCount: 2}
	type step struct {
		after time.Duration // the clock moves this much first
		view  serve.TaskView
		want  int // reminders posted so far
	}
	for _, tc := range []struct {
		name    string
		remind  time.Duration
		restart bool // a new service on the same store before each step
		steps   []step
	}{
		{name: "one reminder after the delay", remind: 24 * time.Hour, steps: []step{
			{0, waiting("t1", 1, "Which greeting?"), 0},
			{23 * time.Hour, waiting("t1", 1, "Which greeting?"), 0},
			{time.Hour, waiting("t1", 1, "Which greeting?"), 1},
			{time.Minute, waiting("t1", 1, "Which greeting?"), 1},
			{72 * time.Hour, waiting("t1", 1, "Which greeting?"), 1},
		}},
		{name: "restarts never send it twice", remind: time.Hour, restart: true, steps: []step{
			{0, waiting("t1", 1, "Which greeting?"), 0},
			{2 * time.Hour, waiting("t1", 1, "Which greeting?"), 1},
			{2 * time.Hour, waiting("t1", 1, "Which greeting?"), 1},
		}},
		{name: "off", remind: 0, steps: []step{
			{0, waiting("t1", 1, "Which greeting?"), 0},
			{1000 * time.Hour, waiting("t1", 1, "Which greeting?"), 0},
		}},
		{name: "none after answering", remind: time.Hour, steps: []step{
			{0, waiting("t1", 1, "Which greeting?"), 0},
			{30 * time.Minute, running, 0},
			{5 * time.Hour, running, 0},
		}},
		{name: "a new question gets its own", remind: time.Hour, steps: []step{
			{0, waiting("t1", 1, "Which greeting?"), 0},
			{2 * time.Hour, waiting("t1", 1, "Which greeting?"), 1},
			{time.Minute, running, 1},
			{time.Minute, waiting("t1", 3, "Which file name?"), 1},
			{30 * time.Minute, waiting("t1", 3, "Which file name?"), 1},
			{30 * time.Minute, waiting("t1", 3, "Which file name?"), 2},
			{10 * time.Hour, waiting("t1", 3, "Which file name?"), 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			conv := &fakeConv{}
			db := filepath.Join(t.TempDir(), "requests.db")
			open := func() *Service {
				s, err := New(Config{Remind: tc.remind, MaxLoops: 5}, Options{Root: t.TempDir(), Now: clock})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Open(db); err != nil {
					t.Fatal(err)
				}
				s.convFor = func(Request) conversation { return conv }
				return s
			}
			s := open()
			defer func() { s.Close() }()
			r := Request{Key: "github:acme/app#7", Source: "github", Repo: "acme/app", Number: 7, Title: "Add X",
				Session: "gh-acme-app-7", Branch: "ralph/github-7", CreatedAt: now}
			if _, err := s.store.Create(r, Entry{ID: "opening", Author: "alice", Body: "b", At: now, Acted: true}); err != nil {
				t.Fatal(err)
			}
			for i, st := range tc.steps {
				now = now.Add(st.after)
				if tc.restart && i > 0 {
					s.Close()
					s = open()
				}
				r, err := s.store.Get(r.Key)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.report(context.Background(), r, st.view, "", repoAt{}); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := conv.reminders(); len(got) != st.want || conv.remindCalls != st.want {
					t.Fatalf("step %d (+%s): %d reminder(s), want %d: %q", i, st.after, len(got), st.want, got)
				}
			}
			if got := conv.reminders(); len(got) > 0 {
				last := got[len(got)-1]
				if !strings.Contains(last, "Reply here") || !strings.Contains(last, "1. ") {
					t.Errorf("reminder %q: want the questions and how to answer", last)
				}
			}
		})
	}
}

func TestRemindSetting(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := map[string]string{"GITHUB_TOKEN": "t", "RALPH_GITHUB_REPOS": "acme/app"}
	cfg, _, err := FromEnv(env(base))
	if err != nil || cfg.Remind != 24*time.Hour {
		t.Fatalf("default: %v, %v", cfg.Remind, err)
	}
	for v, want := range map[string]time.Duration{"0": 0, "90m": 90 * time.Minute} {
		base["RALPH_REQUEST_REMIND"] = v
		if cfg, _, err := FromEnv(env(base)); err != nil || cfg.Remind != want {
			t.Errorf("%s: %v, %v", v, cfg.Remind, err)
		}
	}
	for _, v := range []string{"tomorrow", "-1h", "24"} {
		base["RALPH_REQUEST_REMIND"] = v
		if _, _, err := FromEnv(env(base)); err == nil || !strings.Contains(err.Error(), "RALPH_REQUEST_REMIND") {
			t.Errorf("%s: want an error naming the setting, got %v", v, err)
		}
	}
}

// TestStoreMigrates: a requests.db made before reminders gains their
// columns and keeps its requests.
func TestStoreMigrates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	old := `CREATE TABLE requests (key TEXT PRIMARY KEY, source TEXT NOT NULL, repo TEXT NOT NULL, number INTEGER NOT NULL DEFAULT 0,
		channel TEXT NOT NULL DEFAULT '', thread TEXT NOT NULL DEFAULT '', title TEXT NOT NULL, body TEXT NOT NULL, author TEXT NOT NULL,
		session TEXT NOT NULL UNIQUE, branch TEXT NOT NULL, status_ref TEXT NOT NULL DEFAULT '', pr_number INTEGER NOT NULL DEFAULT 0,
		pr_url TEXT NOT NULL DEFAULT '', handled TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
		INSERT INTO requests(key, source, repo, title, body, author, session, branch, handled, created_at)
		VALUES('github:acme/app#7', 'github', 'acme/app', 'Add X', 'b', 'alice', 'gh-acme-app-7', 'ralph/github-7', 't1/clarify/1', '2026-01-01T09:00:00Z')`
	if _, err := db.Exec(old); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Get("github:acme/app#7")
	if err != nil || r.Handled != "t1/clarify/1" || !r.AskedAt.IsZero() || r.Reminded != "" {
		t.Fatalf("%+v, %v", r, err)
	}
	r.AskedAt, r.Reminded = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), "t1/clarify/1"
	if err := st.Update(r); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Get(r.Key); !got.AskedAt.Equal(r.AskedAt) || got.Reminded != r.Reminded {
		t.Fatalf("after update: %+v", got)
	}
}
