package telegram

import (
	"path/filepath"
	"testing"
	"time"
)

func TestStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telegram.db")
	st, err := openStore(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if off, err := st.offset(t0); err != nil || off != 0 {
		t.Fatalf("empty: %d %v", off, err)
	}
	for _, step := range []struct {
		id    int64
		fresh bool
	}{{500, true}, {501, true}, {500, false}, {501, false}, {502, true}, {7, true}, {7, false}} {
		if fresh, err := st.markUpdate(step.id, t0); err != nil || fresh != step.fresh {
			t.Errorf("update %d: fresh %v %v, want %v", step.id, fresh, err, step.fresh)
		}
	}
	// The offset is the last update that came (Telegram renumbers after a
	// week of silence), and too old an offset is none.
	if off, _ := st.offset(t0.Add(time.Hour)); off != 7 {
		t.Errorf("offset %d", off)
	}
	if off, _ := st.offset(t0.Add(7 * 24 * time.Hour)); off != 0 {
		t.Errorf("a week later: offset %d", off)
	}
	if err := st.addQuestion(42, 1001, "t3", "5", t0); err != nil {
		t.Fatal(err)
	}
	st.close()

	st, err = openStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	if fresh, _ := st.markUpdate(502, t0); fresh {
		t.Error("handled before the restart, fresh after it")
	}
	if task, session, ok, err := st.question(42, 1001); err != nil || !ok || task != "t3" || session != "5" {
		t.Errorf("question after reopening: %q %q %v %v", task, session, ok, err)
	}
	if _, _, ok, _ := st.question(43, 1001); ok {
		t.Error("a question of another chat")
	}
	// Only the last updatesKept are remembered.
	for id := int64(10000); id < 10000+updatesKept+5; id++ {
		st.markUpdate(id, t0)
	}
	var n int
	st.db.QueryRow(`SELECT COUNT(*) FROM updates`).Scan(&n)
	if fresh, _ := st.markUpdate(10000+updatesKept+4, t0); n != updatesKept || fresh {
		t.Errorf("kept %d, the last one fresh %v", n, fresh)
	}
}
