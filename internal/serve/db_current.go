package serve

import (
	"cmp"
	"slices"
	"sync"
)

// currentRows keeps each session's latest task row in memory, read back
// from the store after each write of a task: the list, a session's view and
// every loop's look at its own task then need no query. Under load those
// queries were a tenth of a list request's time and most of its tail, as
// every start and end of a task made the next list read all the rows again.
//
// The rows are loaded on first use, and again after a write whose outcome
// is not known (a failed statement or commit): memory never guesses.
type currentRows struct {
	// write is held across a task write and its read back, so memory
	// takes the writes in the order the store committed them.
	write sync.Mutex
	mu    sync.Mutex
	ok    bool
	by    map[string]row // by session
	// vers numbers the rows as they are read in, never reused: a row's
	// version moves with every write of it, so a reader that kept what it
	// made of a row knows it is still current without comparing.
	vers uint64
}

type row struct {
	Task
	ver uint64
}

// CurrentTasks lists each session's latest task, in creation order.
func (d *DB) CurrentTasks() ([]Task, error) {
	rows, err := d.currentVersions()
	if err != nil {
		return nil, err
	}
	var out []Task // nil when none, as a query gives
	for _, r := range rows {
		out = append(out, own(r.Task))
	}
	return out, nil
}

// currentVersions is each session's latest row with its version, in
// creation order; the tasks share memory with the rows, so they are only
// to be read.
func (d *DB) currentVersions() ([]row, error) {
	by, err := d.currentRows()
	if err != nil {
		return nil, err
	}
	out := make([]row, 0, len(by))
	for _, r := range by {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b row) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// CurrentTask returns session's latest task.
func (d *DB) CurrentTask(session string) (Task, error) {
	by, err := d.currentRows()
	if err != nil {
		return Task{}, err
	}
	r, ok := by[session]
	if !ok {
		return Task{}, ErrNoTask
	}
	return own(r.Task), nil
}

// currentRows returns the rows, loading them when needed. The map is never
// changed once returned: a write replaces it.
func (d *DB) currentRows() (map[string]row, error) {
	c := &d.cur
	c.mu.Lock()
	by, ok := c.by, c.ok
	c.mu.Unlock()
	if ok {
		return by, nil
	}
	// No write may land between the read and its install.
	c.write.Lock()
	defer c.write.Unlock()
	rows, err := d.st.currentTasks.Query()
	if err != nil {
		return nil, err
	}
	ts, err := scanTasks(rows)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	by = make(map[string]row, len(ts))
	for _, t := range ts {
		c.vers++
		by[t.Session] = row{t, c.vers}
	}
	c.by, c.ok = by, true
	c.mu.Unlock()
	return by, nil
}

// own is t with nothing shared with memory: a caller may append to its
// questions.
func own(t Task) Task {
	t.Questions = slices.Clone(t.Questions)
	return t
}

// writeTask runs write, a write of task id()'s row (the id is known once
// written), and reads the row back into memory. A write that failed, or a
// row that cannot be read back, drops the rows, to be read again.
func (d *DB) writeTask(id func() string, write func() error) error {
	c := &d.cur
	c.write.Lock()
	defer c.write.Unlock()
	err := write()
	// The list's keeper hears of the write once memory holds it.
	defer d.cache.changed()
	c.mu.Lock()
	loaded := c.ok
	c.mu.Unlock()
	if !loaded {
		return err
	}
	if err != nil {
		d.forgetRows()
		return err
	}
	t, rerr := scanTask(d.st.task.QueryRow(id()))
	if rerr != nil {
		d.forgetRows()
		return nil // the write itself was done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, has := c.by[t.Session]; has && cur.Seq > t.Seq {
		return nil // an older task of the session: not listed
	}
	by := make(map[string]row, len(c.by)+1)
	for k, v := range c.by {
		by[k] = v
	}
	c.vers++
	by[t.Session] = row{t, c.vers}
	c.by = by
	return nil
}

// forgetRows drops the rows after a write memory cannot follow row by row.
func (d *DB) forgetRows() {
	d.cur.mu.Lock()
	d.cur.by, d.cur.ok = nil, false
	d.cur.mu.Unlock()
}
