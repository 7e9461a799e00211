package serve

import (
	"path/filepath"
	"testing"
	"time"

	"ralph/internal/account"
)

// The accounts' windows and each session's last account outlive the
// store's connection: a restarted daemon knows them.
func TestDBWindowsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ralph.db")
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	short := account.Window{Account: "main", Until: t0.Add(time.Hour), Message: "usage limit (five_hour): resets 1pm", Session: "a", Seen: t0}
	long := account.Window{Account: "main", Until: t0.Add(7 * 24 * time.Hour), Message: "usage limit (weekly)", Session: "b", Seen: t0.Add(time.Minute)}
	other := account.Window{Account: "spare", Until: t0.Add(2 * time.Hour), Message: "m", Session: "c", Seen: t0}
	for _, w := range []account.Window{short, other, long} {
		if err := db.PutWindow(w); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range [][3]string{{"a", "claude", "main"}, {"a", "claude", "spare"}, {"a", "codex", "x"}, {"b", "claude", "main"}} {
		if err := db.PutSessionAccount(s[0], s[1], s[2]); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if db, err = OpenDB(path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, err := db.Windows()
	if err != nil || len(ws) != 2 {
		t.Fatalf("windows: %+v %v", ws, err)
	}
	if w := ws[0]; w.Account != "main" || !w.Until.Equal(long.Until) || w.Message != long.Message || w.Session != "b" || !w.Seen.Equal(long.Seen) {
		t.Errorf("main: %+v, want the last kept (%+v)", w, long)
	}
	if w := ws[1]; w.Account != "spare" || !w.Until.Equal(other.Until) {
		t.Errorf("spare: %+v", w)
	}
	last, err := db.SessionAccounts()
	if err != nil || last["a"]["claude"] != "spare" || last["a"]["codex"] != "x" || last["b"]["claude"] != "main" {
		t.Errorf("the sessions' accounts: %v %v", last, err)
	}
}
