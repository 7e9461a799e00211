package cli

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/store"
)

func TestStatusLine(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	alive := func(pid int) bool { return pid == 100 }
	tests := []struct {
		s    store.Status
		want string
	}{
		{store.Status{Status: "running", LastAction: "executing", PID: 100, Timestamp: now}, "running (executing)"},
		{store.Status{Status: "running", LastAction: "executing", PID: 200, Timestamp: now.Add(-90 * time.Second)},
			"not running (last seen running 1m30s ago, pid 200 gone"},
		{store.Status{Status: "waiting", PID: 200, Timestamp: now}, "not running (last seen waiting"},
		{store.Status{Status: "stopped", LastAction: "plan_complete", PID: 200, Timestamp: now}, "stopped (plan_complete)"},
		{store.Status{Status: "running", LastAction: "executing", Timestamp: now}, "running (executing)"}, // no pid: the bash tool's file
	}
	for _, tt := range tests {
		if got := statusLine(tt.s, alive, now); !strings.HasPrefix(got, tt.want) {
			t.Errorf("statusLine(%+v) = %q, want %q…", tt.s, got, tt.want)
		}
	}
}
