package loop

import (
	"testing"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/reason"
)

func TestFoldWatch(t *testing.T) {
	since, at := t0, t0.Add(90*time.Second)
	th := breaker.DefaultThresholds()
	running := State{Version: StateVersion, Loop: 4, Breaker: breaker.New(t0)}
	stuck := running
	stuck.Breaker.NoProgress = th.NoProgress - 1
	block := func(status string, files int) Observed {
		return Observed{Status: status, FilesModified: files, StatusBlock: map[string]string{"STATUS": status}}
	}
	tests := []struct {
		name     string
		st       State
		w        Watched
		loop     int
		files    int
		progress bool
		status   breaker.Status
		decision string
	}{
		{"git saw the work", running, Watched{Observed: block("IN_PROGRESS", 0), InRepo: true, Changed: true, Files: 2},
			5, 2, true, breaker.Closed, "continue"},
		{"git saw nothing, whatever the agent claims", stuck, Watched{Observed: block("IN_PROGRESS", 3), InRepo: true},
			5, 0, false, breaker.Open, "stop:circuit_breaker_open"},
		{"outside a repository the agent's count is progress", running, Watched{Observed: block("IN_PROGRESS", 3)},
			5, 3, true, breaker.Closed, "continue"},
		{"outside a repository an unknown count is none", running, Watched{Observed: block("IN_PROGRESS", -1)},
			5, 0, false, breaker.Closed, "continue"},
		{"a ticked checklist item is progress", stuck, Watched{Observed: block("IN_PROGRESS", 0), InRepo: true, PlanGain: 1},
			5, 0, true, breaker.Closed, "continue"},
		{"COMPLETE is progress, and done ends it", stuck,
			Watched{Observed: block(analyze.StatusComplete, 0), InRepo: true, Done: reason.ProjectComplete},
			5, 0, true, breaker.Closed, "stop:project_complete"},
		{"BLOCKED without progress counts towards the halt", stuck, Watched{Observed: block(analyze.StatusBlocked, 0), InRepo: true},
			5, 0, false, breaker.Open, "stop:circuit_breaker_open"},
		{"a session never run starts a state", State{}, Watched{Observed: block("IN_PROGRESS", 0), InRepo: true, Changed: true, Files: 1},
			1, 1, true, breaker.Closed, "continue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.w.Since, tt.w.At = since, at
			before := tt.st.Breaker.NoProgress
			st, rec, bd := FoldWatch(tt.st, tt.w, th)
			if st.Loop != tt.loop || rec.Loop != tt.loop || st.Version != StateVersion {
				t.Errorf("loop %d (record %d, version %d), want %d", st.Loop, rec.Loop, st.Version, tt.loop)
			}
			if rec.FilesChanged != tt.files || rec.Progress != tt.progress || rec.Decision != tt.decision {
				t.Errorf("record files %d progress %v decision %q, want %d %v %q", rec.FilesChanged, rec.Progress, rec.Decision,
					tt.files, tt.progress, tt.decision)
			}
			if st.Breaker.Status != tt.status || bd.Halt() != (tt.status == breaker.Open) || rec.Breaker != string(tt.status) {
				t.Errorf("breaker %s (halt %v, record %s), want %s", st.Breaker.Status, bd.Halt(), rec.Breaker, tt.status)
			}
			if rec.Agent != WatchAgent || rec.DurationMS != 90000 || !rec.StartedAt.Equal(since) || rec.StatusBlock["STATUS"] != tt.w.Observed.Status {
				t.Errorf("record %+v", rec)
			}
			if tt.st.Breaker.NoProgress != before {
				t.Error("FoldWatch changed its input")
			}
		})
	}
}
