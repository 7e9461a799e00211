package serve

import (
	"database/sql"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"ralph/internal/loop"
	"ralph/internal/scarce"
	"ralph/internal/store"
)

type sqliteErr int

func (e sqliteErr) Error() string { return fmt.Sprintf("sqlite error (%d)", int(e)) }
func (e sqliteErr) Code() int     { return int(e) }

// SQLite says a full disk with a result code, not an errno: the store
// marks it so that one classifier (scarce.Of) sees it.
func TestDBErrMarksAFullDatabase(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want scarce.Kind
	}{
		{nil, ""},
		{sqliteErr(13), scarce.DiskFull},
		{fmt.Errorf("commit: %w", sqliteErr(13)), scarce.DiskFull},
		{sqliteErr(5), ""},                // SQLITE_BUSY
		{sqliteErr(10 | 3<<8), ""},        // SQLITE_IOERR_WRITE: not known to be space
		{sql.ErrNoRows, ""},               //
		{syscall.ENOSPC, scarce.DiskFull}, // an errno passes through
	} {
		if got := scarce.Of(dbErr(tc.err)); got != tc.want {
			t.Errorf("dbErr(%v): %q, want %q", tc.err, got, tc.want)
		}
	}
}

// What ends a loop only for now, and how it is shown.
func TestWaitable(t *testing.T) {
	held := &treeHeldError{dir: "/src/a", holder: &store.LockedError{PID: 42}}
	daemon := &treeHeldError{dir: "/src/a", holder: &store.LockedError{PID: 7, Holder: "ralph serve (RALPH_HOME /h, pid 7), session b, task t2"}}
	for _, tc := range []struct {
		err       error
		why, kind string
	}{
		{fmt.Errorf("loop: %w", held), "/src/a is in use by ralph run, pid 42", waitTree},
		{daemon, "/src/a is in use by ralph serve (RALPH_HOME /h, pid 7), session b, task t2", waitTree},
		{fmt.Errorf("task file: %w", syscall.ENOSPC), "disk full; retrying", loop.WaitResources},
		{errors.New("session a is not registered"), "", ""},
	} {
		why, kind, ok := waitable(tc.err)
		if why != tc.why || kind != tc.kind || ok != (tc.why != "") {
			t.Errorf("waitable(%v) = %q, %q, %v", tc.err, why, kind, ok)
		}
	}
}
