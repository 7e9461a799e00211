package serve

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/fleet"
)

// flaky is a chat: it fails its first `fails` tries, then delivers,
// remembering the ids it posted as a chat adapter does.
type flaky struct {
	name  string
	mu    sync.Mutex
	fails int
	tries int
	got   []string // the ids delivered, in order
}

func (f *flaky) Channel() string { return f.name }
func (f *flaky) Notify(n Notice) { _ = f.Deliver(context.Background(), n) }
func (f *flaky) Deliver(_ context.Context, n Notice) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.fails > 0 {
		f.fails--
		return errors.New("chat out of reach")
	}
	f.got = append(f.got, n.ID)
	return nil
}

func (f *flaky) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testOutbox(t *testing.T, db *DB, ns Notifiers) *outbox {
	t.Helper()
	o := newOutbox(db, ns, t.Logf)
	o.first = 10 * time.Millisecond
	o.start()
	t.Cleanup(func() { o.close(time.Second) })
	return o
}

// A failing channel is tried again with backoff until it delivers, keeps
// the notices' order, gets each once, and holds up no other channel.
func TestOutboxRetriesInOrder(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	chat := &flaky{name: "chat", fails: 3}
	var log heard
	o := testOutbox(t, db, Notifiers{chat, &log})
	var want []string
	for _, k := range []string{NoticeQuestion, NoticeDone, NoticeHalted} {
		n := Notice{Kind: k, TaskID: "t1"}
		if err := db.AddNotice(&n, o.names, time.Now()); err != nil {
			t.Fatal(err)
		}
		want = append(want, n.ID)
		o.wakeAll()
	}
	waitFor(t, "the other channel hears all three while the chat fails", func() bool { return log.String() == "question,done,halted" })
	waitFor(t, "the chat has all three", func() bool { return len(chat.ids()) == 3 })
	if got := chat.ids(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the chat got %v, want %v", got, want)
	}
	if chat.tries != 6 {
		t.Errorf("%d tries for 3 notices and 3 failures", chat.tries)
	}
	var owed int
	if err := db.db.QueryRow(`SELECT COUNT(*) FROM outbox_deliveries WHERE delivered_at = 0`).Scan(&owed); err != nil || owed != 0 {
		t.Errorf("%d deliveries still owed (%v)", owed, err)
	}
}

// What a daemon could not deliver, the next one does, and only to the
// channels that have not had it; a stalled channel holds up neither the
// others nor the daemon's end.
func TestOutboxOutlivesTheDaemon(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	down := &flaky{name: "chat", fails: 1 << 30}
	stalled := blocking{release: make(chan struct{})}
	defer close(stalled.release)
	var log heard
	o := newOutbox(db, Notifiers{down, &log, stalled}, t.Logf)
	o.first = time.Hour
	o.start()
	n := Notice{Kind: NoticeQuestion, TaskID: "t1", Questions: []string{"Keep it?"}}
	began := time.Now()
	o.Notify(n)
	if d := time.Since(began); d > time.Second {
		t.Fatalf("Notify took %s behind a stalled channel", d)
	}
	waitFor(t, "the log hears it", func() bool { return log.String() == NoticeQuestion })
	waitFor(t, "a failed try", func() bool { down.mu.Lock(); defer down.mu.Unlock(); return down.tries > 0 })
	began = time.Now()
	o.close(200 * time.Millisecond)
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("a stalled channel held the end for %s", d)
	}

	// The next daemon, the chat back.
	up := &flaky{name: "chat"}
	var log2 heard
	testOutbox(t, db, Notifiers{up, &log2, &heard{}})
	waitFor(t, "the question after the restart", func() bool { return len(up.ids()) == 1 })
	time.Sleep(50 * time.Millisecond)
	if k := log2.String(); k != "" {
		t.Errorf("the log, which had it, heard it again: %q", k)
	}
	if got := up.ids(); len(got) != 1 || !strings.HasPrefix(got[0], "n1.") {
		t.Errorf("after the restart the chat got %v", got)
	}
}

// blocking is a channel whose deliveries hang until released, as a chat
// whose API does not answer.
type blocking struct{ release chan struct{} }

func (b blocking) Notify(Notice) { <-b.release }

// heard is a channel that records the kinds it is told.
type heard struct {
	mu    sync.Mutex
	kinds []string
}

func (h *heard) Notify(n Notice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.kinds = append(h.kinds, n.Kind)
}

func (h *heard) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.kinds, ",")
}

// retryWait doubles from the first wait up to lastRetry.
func TestRetryWait(t *testing.T) {
	for _, c := range []struct {
		tries int
		want  time.Duration
	}{{0, time.Second}, {1, 2 * time.Second}, {3, 8 * time.Second}, {8, 256 * time.Second}, {9, lastRetry}, {1000, lastRetry}} {
		if got := retryWait(time.Second, c.tries); got != c.want {
			t.Errorf("after %d tries: %s, want %s", c.tries, got, c.want)
		}
	}
}

// A task's change and its notice are saved together, the notice owed to
// each channel; a store from before the outbox gains it; delivered
// notices go after a day, any after a week.
func TestOutboxInAnOldStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ralph.db")
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// The tasks table as the release before the outbox made it.
	for _, q := range []string{
		`CREATE TABLE tasks (id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, session TEXT NOT NULL, title TEXT NOT NULL, origin TEXT NOT NULL,
			state TEXT NOT NULL, max_loops INTEGER NOT NULL DEFAULT 0, first_loop INTEGER NOT NULL DEFAULT 0, loops INTEGER NOT NULL DEFAULT 0,
			exit_reason TEXT NOT NULL DEFAULT '', message TEXT NOT NULL DEFAULT '', questions TEXT NOT NULL DEFAULT '[]', pr_url TEXT NOT NULL DEFAULT '',
			file TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, reply_to TEXT NOT NULL DEFAULT '', first_cost REAL NOT NULL DEFAULT 0)`,
		`INSERT INTO tasks(id, seq, session, title, origin, state, file, created_at, updated_at) VALUES('t1', 1, '5', 'Old', 'cli', 'running', 'f.md', '', '')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	task, err := db.Task("t1")
	if err != nil {
		t.Fatal(err)
	}
	task.State, task.Questions = fleet.Waiting, []string{"Keep it?"}
	n := Notice{Kind: NoticeQuestion, TaskID: "t1", Questions: task.Questions}
	if err := db.UpdateTaskNotice(task, &n, []string{"log", "chat"}, t0); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Task("t1"); got.State != fleet.Waiting {
		t.Errorf("the task: %+v", got)
	}
	for _, c := range []string{"log", "chat"} {
		owed, err := db.pendingNotices(c, 10)
		if err != nil || len(owed) != 1 || owed[0].notice.ID != n.ID || owed[0].notice.Questions[0] != "Keep it?" {
			t.Fatalf("owed to %s: %+v, %v", c, owed, err)
		}
	}
	if err := db.noticeDelivered(1, "log", t0); err != nil {
		t.Fatal(err)
	}
	// A second notice, delivered everywhere.
	m := Notice{Kind: NoticeDone, TaskID: "t1"}
	if err := db.AddNotice(&m, []string{"log"}, t0); err != nil {
		t.Fatal(err)
	}
	if err := db.noticeDelivered(2, "log", t0); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		db.db.QueryRow(`SELECT COUNT(*) FROM outbox`).Scan(&n)
		return n
	}
	if lost, err := db.pruneOutbox(t0.Add(-time.Hour), t0.Add(-time.Hour)); err != nil || lost != 0 || count() != 2 {
		t.Errorf("a prune of nothing old: %d lost, %d kept, %v", lost, count(), err)
	}
	if lost, err := db.pruneOutbox(t0.Add(time.Hour), t0.Add(-time.Hour)); err != nil || lost != 0 || count() != 1 {
		t.Errorf("the delivered notice pruned: %d lost, %d kept, %v", lost, count(), err)
	}
	if lost, err := db.pruneOutbox(t0.Add(time.Hour), t0.Add(time.Hour)); err != nil || lost != 1 || count() != 0 {
		t.Errorf("the stale notice pruned: %d lost, %d kept, %v", lost, count(), err)
	}
}
