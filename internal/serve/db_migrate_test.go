package serve

import (
	"context"
	"os/exec"
	"testing"

	"ralph/internal/fleet"
	"ralph/internal/loop"
)

// Rows written before the state held the agent session, and records
// written before they kept the analysis's reading of the status block,
// are read and migrated.
func TestOldRowsAreMigrated(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	d, err := Open(Options{Home: Home(dir), Sessions: []Session{{Name: "5", Dir: dir}}, Watch: WatchOptions{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	tk, err := d.db.CreateTask(context.Background(), Task{Session: "5", Title: "Do it", Origin: "cli", State: fleet.Waiting, File: "f",
		MaxLoops: 5, CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	// A version-2 state, the session in its own column; a record with
	// only the status block.
	for _, q := range []string{
		`UPDATE sessions SET state = '{"version":2,"loop_count":1,"breaker":{"state":"CLOSED"}}', agent_session = 'old-1' WHERE name = '5'`,
		`INSERT INTO iterations(session, loop, task_id, record) VALUES ('5', 1, '` + tk.ID + `', '{"loop":1,"status_block":{"PR_READY":"yes","TESTS_STATUS":"FAIL (2 of 40)"}}')`,
	} {
		if _, err := d.db.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	st, found, err := d.db.LoadState("5")
	if err != nil || !found || st.Version != loop.StateVersion || st.Session.ID != "old-1" || st.Session.Started.IsZero() {
		t.Fatalf("migrated state: %v %v %+v", err, found, st)
	}
	// Saved as a current document, the column is never read again.
	if err := d.db.SaveState("5", "", loop.ForgetSession(st), nil); err != nil {
		t.Fatal(err)
	}
	if st, _, err := d.db.LoadState("5"); err != nil || st.Session.ID != "" {
		t.Errorf("after a save: %v, session %+v (the old column came back)", err, st.Session)
	}
	v, err := d.Status("5")
	if err != nil || len(v.History) != 1 {
		t.Fatalf("view: %v %+v", err, v.History)
	}
	if h := v.History[0]; !h.PRReady || h.TestsStatus != "FAILING" {
		t.Errorf("old record in the view: pr_ready %v, tests %q; want true, FAILING", h.PRReady, h.TestsStatus)
	}
}
