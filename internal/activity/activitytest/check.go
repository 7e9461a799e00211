package activitytest

import (
	"testing"

	"ralph/internal/activity"
)

// EventScanner is a wire package's Scanner as far as one event goes.
type EventScanner interface {
	Event(typ, line []byte) bool
}

// CheckEvent fails the test unless a scanner made by newScanner reads line,
// an event of type typ, as one and hands on the facts want, one a line.
func CheckEvent[S EventScanner](t *testing.T, newScanner func(activity.Facts) S, typ, line, want string) {
	t.Helper()
	var f Facts
	if !newScanner(&f).Event([]byte(typ), []byte(line)) {
		t.Fatal("not read as an event")
	}
	if got := f.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
