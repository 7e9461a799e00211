package serve

import (
	"slices"
	"sync"

	"ralph/internal/loop"
)

// viewCache keeps what a task view needs of the store in memory: each
// session's loop number and breaker, and its current task's last
// iterations. The daemon is the store's only writer, so SaveState keeps it
// exact; status and list requests then cost no query or JSON decoding per
// task, which keeps them fast while hundreds of loops save iterations.
type viewCache struct {
	mu       sync.Mutex
	progress map[string]progress    // by session
	history  map[string]taskHistory // by session
	// gen counts each session's saves: a value read from the store is
	// kept only if no save came in between, or a slow reader would put
	// back what a save just replaced. The list view (listview.go) keeps
	// each task's rendered view until its session's generation moves:
	// touch moves it for what the view shows from outside the store (the
	// loop's activity, the watchdog).
	gen map[string]uint64
	// onChange, when set, hears of every move of a generation and every
	// write of a task row (the list's keeper), after it.
	onChange func()
}

// changed follows a write of task rows (their versions are in the rows
// themselves, currentRows).
func (c *viewCache) changed() {
	c.notify()
}

func (c *viewCache) notify() {
	if c.onChange != nil {
		c.onChange()
	}
}

// touch follows a change of what a session's view shows from memory.
func (c *viewCache) touch(session string) {
	c.mu.Lock()
	c.init()
	c.gen[session]++
	c.mu.Unlock()
	c.notify()
}

// generations are each listed session's generation.
func (c *viewCache) generations(sessions []string) []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	g := make([]uint64, len(sessions))
	for i, s := range sessions {
		g[i] = c.gen[s]
	}
	return g
}

// progress is the part of a session's state a view shows.
type progress struct {
	found   bool
	loop    int
	cost    float64 // the session's, all tasks'
	tokens  int64   // input + output, as cost
	breaker BreakerView
}

// taskHistory is the last historyShown iterations of one task, oldest
// first.
type taskHistory struct {
	taskID string
	recs   []loop.Metrics
}

func progressOf(st loop.State, found bool) progress {
	p := progress{found: found, breaker: BreakerView{State: "CLOSED", ErrorHistory: []string{}}}
	if found {
		b := st.Breaker
		p.loop, p.cost = st.Loop, st.CostUSD
		p.tokens = st.Usage.InputTokens + st.Usage.OutputTokens
		p.breaker = BreakerView{State: string(b.Status), ConsecutiveNoProgress: b.NoProgress, ConsecutiveSameError: b.SameError,
			LastProgressLoop: b.LastProgressLoop, TotalOpens: b.TotalOpens, Reason: b.Message, CurrentLoop: b.CurrentLoop,
			LastChangeAt: b.LastChange, ErrorHistory: append([]string{}, b.ErrorHistory...)}
	}
	return p
}

func (c *viewCache) init() {
	if c.gen == nil {
		c.progress, c.history, c.gen = map[string]progress{}, map[string]taskHistory{}, map[string]uint64{}
	}
}

// getProgress returns the cached progress, or the generation to pass to
// setProgress with what the caller reads from the store instead.
func (c *viewCache) getProgress(session string) (progress, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	p, ok := c.progress[session]
	return p, ok, c.gen[session]
}

func (c *viewCache) setProgress(session string, p progress, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[session] == gen {
		c.progress[session] = p
	}
}

func (c *viewCache) getHistory(session, taskID string) ([]loop.Metrics, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	h, ok := c.history[session]
	if !ok || h.taskID != taskID {
		return nil, false, c.gen[session]
	}
	return slices.Clone(h.recs), true, c.gen[session]
}

func (c *viewCache) setHistory(session, taskID string, recs []loop.Metrics, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[session] == gen {
		c.history[session] = taskHistory{taskID: taskID, recs: slices.Clone(recs)}
	}
}

// saved follows a committed SaveState.
func (c *viewCache) saved(session, taskID string, st loop.State, rec *loop.Metrics) {
	defer c.notify()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.gen[session]++
	c.progress[session] = progressOf(st, true)
	if rec == nil {
		return
	}
	h, ok := c.history[session]
	if !ok || h.taskID != taskID {
		// Unknown earlier iterations of this task: read them on demand.
		delete(c.history, session)
		return
	}
	// A record saved twice (the replay after a kill) replaces itself.
	recs := slices.DeleteFunc(slices.Clone(h.recs), func(m loop.Metrics) bool { return m.Loop >= rec.Loop })
	recs = append(recs, rec.Lean())
	if len(recs) > historyShown {
		recs = recs[len(recs)-historyShown:]
	}
	c.history[session] = taskHistory{taskID: taskID, recs: recs}
}
