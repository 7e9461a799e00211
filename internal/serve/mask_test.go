package serve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/taskfile"
)

// What the daemon stores and serves is masked at its own boundaries,
// whatever the text came through (a worker's record, a task's questions, a
// person's answer, a message), not only because the agent's output was
// masked as it was written: a known secret is in none of the database's
// bytes, the task file, a view, an API reply or an event.
func TestStoredAndServedTextIsMasked(t *testing.T) {
	const secret = "unitplain5151qq"
	redact.Add(secret)
	home := Home(t.TempDir())
	d, err := Open(Options{Home: home, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.db.PutSession(Session{Name: "a", Dir: "/src/a"}); err != nil {
		t.Fatal(err)
	}
	file := home.TaskFile("a")
	if err := os.WriteFile(file, taskfile.New("Deploy", "a", t0), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := d.db.CreateTask(context.Background(), Task{Session: "a", Title: "Deploy with " + secret, Origin: "cli", State: fleet.Waiting,
		Questions: []string{"Keep " + secret + "?"}, Message: "asks about " + secret, File: file, CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	ws := &workspace{home: home, db: d.db, session: Session{Name: "a", Dir: "/src/a"}, taskID: tk.ID}
	st := loop.State{Version: loop.StateVersion, Loop: 1, Breaker: breaker.New(t0)}
	st.Last.Summary, st.Last.Questions = "used "+secret, []string{"Keep " + secret + "?"}
	rec := loop.Metrics{Loop: 1, Summary: "used " + secret, StatusBlock: map[string]string{"STATUS": "IN_PROGRESS", "RECOMMENDATION": "rotate " + secret}}
	if err := ws.SaveState(st, &rec); err != nil {
		t.Fatal(err)
	}
	events, stop := d.Subscribe()
	defer stop()
	d.publish(tk, "task_waiting", "asks about "+secret)
	event := string((<-events).JSON())
	if _, err := d.Do(context.Background(), fleet.Command{Verb: fleet.Answer, Session: "a", Text: "Keep " + secret, Who: fleet.Who{Surface: fleet.SurfaceCLI}}); err != nil {
		t.Fatal(err)
	}

	v, err := d.Status("a")
	if err != nil {
		t.Fatal(err)
	}
	view, _ := json.Marshal(v)
	req := httptest.NewRequest("GET", "/api/tasks/a", nil)
	req.Header.Set("Authorization", "Bearer tok")
	reply := httptest.NewRecorder()
	d.Handler("tok").ServeHTTP(reply, req)
	if reply.Code != 200 || !strings.Contains(reply.Body.String(), "rotate [redacted]") {
		t.Errorf("GET /api/tasks/a: %d %s", reply.Code, reply.Body)
	}
	task := string(mustRead(t, file))
	if !strings.Contains(task, "RECOMMENDATION: rotate [redacted]") || !strings.Contains(task, "A: Keep [redacted]") {
		t.Errorf("task file:\n%s", task)
	}
	texts := map[string]string{"the view": string(view), "the API's reply": reply.Body.String(), "the event": event, "the task file": task}
	for _, name := range []string{"ralph.db", "ralph.db-wal"} {
		if b, err := os.ReadFile(filepath.Join(string(home), name)); err == nil {
			texts[name] = string(b)
		}
	}
	if texts["ralph.db"]+texts["ralph.db-wal"] == "" {
		t.Fatal("no database bytes to read")
	}
	for what, text := range texts {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the secret", what)
		}
	}
}
