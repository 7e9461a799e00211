package serve

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// A store made before tasks had a reply address gains the column; its
// tasks read back with none, and new ones keep theirs.
func TestDBAddsReplyTo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ralph.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	oldSchema := strings.Replace(schema, ",\n\treply_to    TEXT NOT NULL DEFAULT '',\n\tfirst_cost  REAL NOT NULL DEFAULT 0", "", 1)
	if oldSchema == schema {
		t.Fatal("the test no longer makes an old schema")
	}
	if _, err := old.Exec(oldSchema); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`INSERT INTO tasks(id, seq, session, title, origin, state, file, created_at, updated_at)
		VALUES('t1', 1, 'a', 'old', 'cli', 'waiting', 'f', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	for range 2 { // and opening it again changes nothing
		db, err := OpenDB(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := db.Task("t1"); err != nil || got.Title != "old" || got.ReplyTo != "" || got.FirstCost != 0 {
			t.Fatalf("old task: %v %+v", err, got)
		}
		db.Close()
	}
	db := openTestDB(t, filepath.Dir(path))
	tk, err := db.CreateTask(context.Background(), Task{Session: "a", Title: "new", Origin: "telegram", State: fleet.Waiting, File: "g", CreatedAt: t0,
		ReplyTo: "-100200", FirstCost: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Task(tk.ID); got.ReplyTo != "-100200" || got.Origin != "telegram" || got.FirstCost != 1.5 {
		t.Errorf("new task: %+v", got)
	}
}

func TestSummaryAndCost(t *testing.T) {
	s := lastSummary([]loop.Metrics{{Summary: "first"}, {Summary: "used key sk-ant-abcdefghijklmnop"}, {Summary: "  "}})
	if strings.Contains(s, "sk-ant") || !strings.HasPrefix(s, "used key") {
		t.Errorf("summary %q", s)
	}
	if s := lastSummary(nil); s != "" {
		t.Errorf("none: %q", s)
	}
	for _, c := range []struct {
		p    progress
		t    Task
		want float64
	}{
		{progress{found: true, cost: 3.5}, Task{FirstCost: 1}, 2.5},
		{progress{found: true, cost: 1}, Task{FirstCost: 1}, 0},
		{progress{}, Task{}, 0},
	} {
		if got := taskCost(c.p, c.t); got != c.want {
			t.Errorf("taskCost(%+v, %v) = %v", c.p, c.t.FirstCost, got)
		}
	}
}

type recordNotifier struct{ got *[]string }

func (r recordNotifier) Notify(n Notice) { *r.got = append(*r.got, n.Kind) }

func TestNotifiersInOrder(t *testing.T) {
	var got []string
	Notifiers{recordNotifier{&got}, recordNotifier{&got}}.Notify(Notice{Kind: NoticeStopped})
	if len(got) != 2 || got[0] != NoticeStopped {
		t.Errorf("%v", got)
	}
	if txt := (Notice{Kind: NoticeStopped, Session: "5", TaskID: "t1", Title: "x", Message: "max_loops"}).Text(); !strings.Contains(txt, "stopped: max_loops") {
		t.Errorf("text %q", txt)
	}
}

// Routes are served without the API token; everything else still needs it.
func TestRoutesOutsideTheToken(t *testing.T) {
	d := &Daemon{opts: Options{Routes: map[string]http.Handler{
		"POST /webhooks/x": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }),
	}}}
	h := d.Handler("tok")
	for _, c := range []struct {
		method, path string
		want         int
	}{{"POST", "/webhooks/x", 202}, {"GET", "/api/tasks", 401}, {"GET", "/webhooks/x", 401}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, rec.Code, c.want)
		}
	}
}
