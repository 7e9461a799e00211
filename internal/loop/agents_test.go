package loop

import (
	"testing"
	"time"
)

func TestChooseAgent(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	names := []string{"claude", "codex", "gemini"}
	held := func(d time.Duration) AgentLimit { return AgentLimit{Until: t0.Add(d)} }
	tests := []struct {
		name     string
		limits   map[string]AgentLimit
		wantIdx  int
		wantFree bool
	}{
		{"nothing held: the primary", nil, 0, true},
		{"primary held: first fallback", map[string]AgentLimit{"claude": held(time.Hour)}, 1, true},
		{"two held: the third", map[string]AgentLimit{"claude": held(time.Hour), "codex": held(time.Minute)}, 2, true},
		{"primary reset exactly now: back to it", map[string]AgentLimit{"claude": held(0), "codex": held(time.Hour)}, 0, true},
		{"a fallback held, primary free", map[string]AgentLimit{"codex": held(time.Hour)}, 0, true},
		{"all held: the one that frees first", map[string]AgentLimit{"claude": held(3 * time.Hour), "codex": held(time.Hour), "gemini": held(2 * time.Hour)}, 1, false},
		{"all held, tie: the earlier in order", map[string]AgentLimit{"claude": held(time.Hour), "codex": held(time.Hour), "gemini": held(time.Hour)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx, free := chooseAgent(names, tt.limits, t0)
			if idx != tt.wantIdx || free != tt.wantFree {
				t.Errorf("chooseAgent = %d, %v; want %d, %v", idx, free, tt.wantIdx, tt.wantFree)
			}
		})
	}
}
