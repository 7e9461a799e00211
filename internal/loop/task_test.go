package loop

import (
	"testing"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
)

func TestForTask(t *testing.T) {
	now := t0.Add(time.Hour)
	old := State{Version: 2, Loop: 19, Run: Run{StartedAt: t0, FirstLoop: 15},
		Breaker: breaker.State{Status: breaker.Open, CurrentLoop: 19, LastProgressLoop: 12, TotalOpens: 2, NoProgress: 3},
		Stop:    stop.State{DoneStreak: 1}, Calls: ratelimit.State{Calls: []ratelimit.Call{{At: t0}}},
		Tokens: 900, CostUSD: 1.5, Usage: analyze.Usage{InputTokens: 600}, SessionUsage: SessionUsage{ID: "s1"},
		Session: AgentSession{ID: "s1", Started: t0},
		Agent:   "codex", AgentLimits: map[string]AgentLimit{"claude": {Until: now.Add(time.Hour)}},
		Backoff: time.Minute, Pause: Pause{Until: now}, Last: Last{Summary: "old"}, Corrections: []string{"old"}, ResetID: "r1"}
	got := ForTask(old, now)
	if got.Loop != 0 || got.Breaker.Status != breaker.Closed || got.Breaker.CurrentLoop != 0 || got.Breaker.LastProgressLoop != 0 ||
		got.Breaker.NoProgress != 0 || got.Stop != (stop.State{}) || got.Backoff != 0 || !got.Pause.Until.IsZero() ||
		got.Last.Summary != "" || got.Corrections != nil || got.SessionUsage != (SessionUsage{}) || got.Session != (AgentSession{}) || !got.Run.StartedAt.IsZero() {
		t.Errorf("the previous task leaks into the new one: %+v", got)
	}
	if got.Version != 2 || len(got.Calls.Calls) != 1 || got.Tokens != 900 || got.CostUSD != 1.5 || got.Usage.InputTokens != 600 ||
		got.Agent != "codex" || len(got.AgentLimits) != 1 || got.ResetID != "r1" {
		t.Errorf("the session's own state was lost: %+v", got)
	}
	if old.Loop != 19 || old.Breaker.Status != breaker.Open {
		t.Error("ForTask changed its input")
	}
}
