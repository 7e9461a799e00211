package loop

import "time"

// chooseAgent is the fallback rule: the first agent in the configured order
// whose usage limit has passed (so the primary is taken back as soon as it
// resets). When every agent is held, free is false and idx is the one that
// frees first: the loop waits for it.
func chooseAgent(names []string, limits map[string]AgentLimit, now time.Time) (idx int, free bool) {
	idx = -1
	for i, n := range names {
		l, held := limits[n]
		if !held || !now.Before(l.Until) {
			return i, true
		}
		if idx < 0 || l.Until.Before(limits[names[idx]].Until) {
			idx = i
		}
	}
	return max(idx, 0), false
}
