package cli

import (
	"fmt"
	"time"

	"ralph/internal/store"
)

// activeStatuses are those of a loop that should have a live process.
var activeStatuses = map[string]bool{"running": true, "waiting": true, "paused": true}

// statusGone reports a status.json whose writer died without saying so (a
// crash, kill -9, a lost machine): it claims a loop that no process runs.
func statusGone(s store.Status, alive func(int) bool) bool {
	return activeStatuses[s.Status] && s.PID > 0 && !alive(s.PID)
}

// statusLine is `ralph status`'s first line: what the loop does, or that
// nothing runs any more and since when.
func statusLine(s store.Status, alive func(int) bool, now time.Time) string {
	if statusGone(s, alive) {
		return fmt.Sprintf("not running (last seen %s %s ago, pid %d gone; `ralph run` starts it again)",
			s.Status, now.Sub(s.Timestamp).Round(time.Second), s.PID)
	}
	return fmt.Sprintf("%s (%s)", s.Status, s.LastAction)
}
