package loop

// Budget is an iteration budget counted from a baseline: MaxLoops loops
// from the state's loop count FirstLoop. A run's budget counts from where
// the run began (Run.FirstLoop); a fleet task's from where the task began,
// so that a restarted daemon, a Temporal workflow and every view agree on
// how many loops a task made and has left. This is the only place that
// arithmetic is done.
type Budget struct {
	MaxLoops  int `json:"max_loops"`
	FirstLoop int `json:"first_loop"`
}

// Used is how many loops were made at loop count n: the loop number as
// the budget's owner counts it (never below 0, for a count from before a
// migration or a reset).
func (b Budget) Used(n int) int { return max(n-b.FirstLoop, 0) }

// Left is how many loops remain at loop count n (0 or less: spent).
func (b Budget) Left(n int) int { return b.MaxLoops - b.Used(n) }

// Grant is the budget after a person grants more loops at loop count n:
// they count from the loops already made, so an overspent or spent budget
// is extended, not refilled from its start.
func (b Budget) Grant(n, more int) Budget {
	b.MaxLoops = b.Used(n) + more
	return b
}

// Topped is the budget a resumed task goes on with at loop count n: the
// same one while loops are left, else more loops granted.
func (b Budget) Topped(n, more int) Budget {
	if b.Left(n) > 0 {
		return b
	}
	return b.Grant(n, more)
}
