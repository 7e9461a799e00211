package serve

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"ralph/internal/redact"
	"ralph/internal/store"
)

// listView answers GET /api/tasks from memory. Each task's view is kept as
// the masked JSON the API sends, rendered again only after its row or its
// session's generation moved: a saved iteration, a new status of its loop,
// the watchdog's look (viewCache). The rows themselves are in memory
// (currentRows).
//
// While someone reads the list, a keeper renders what changed as it
// changes, so a request finds the views ready: under load a render waits
// for a core like everything else, and a request that renders the views of
// the dozen loops that moved since the last one took ten times longer than
// one that only copies bytes. A request still renders by itself a view
// whose task row changed (a command's effect shows at once) and one its
// keeper left older than listLag: a loop's progress shows within that.
type listView struct {
	mu      sync.Mutex
	entries map[string]listEntry // by task id

	// bodies are the answers' buffers, used again: a list of 200 tasks is
	// a third of a megabyte, and allocating it per request made the
	// request pay for the garbage collector's work under load.
	bodies sync.Pool

	keeping  atomic.Bool  // a keeper runs (Daemon.Run)
	lastRead atomic.Int64 // when a request last read the list, unix ns
	kick     chan struct{}
}

// listLag bounds how long the list may show a loop's progress late.
const listLag = time.Second

// listFollowed is how long after the last request the keeper goes on
// rendering changes: a dashboard polls more often than this.
const listFollowed = 15 * time.Second

type listEntry struct {
	task Task      // as rendered
	row  uint64    // its row's version (currentRows)
	gen  uint64    // its session's generation when rendered
	at   time.Time // when rendered
	view TaskView
	json []byte // view, masked
}

// sameShown says whether two statuses of a loop show the same in its
// task's view (viewOf): most of a loop's status writes move only counters
// the view leaves out, and need no new render.
func sameShown(a, b store.Status) bool {
	if a.LastAction != b.LastAction || (a.Wait == nil) != (b.Wait == nil) {
		return false
	}
	return a.Wait == nil || (a.Wait.Kind == b.Wait.Kind && a.Wait.Reason == b.Wait.Reason && a.Wait.Until.Equal(b.Wait.Until))
}

// listed is each session's current task with its view, in creation order:
// for a request (fresh false, the keeper's views as they are when recent
// enough) or for the keeper (fresh true, every view current).
func (d *Daemon) listed(fresh bool) ([]listEntry, error) {
	l := &d.list
	rows, err := d.db.currentVersions()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Session
	}
	// The generations are read before what they cover, so a change that
	// lands during a render makes the next look render again, never a
	// stale view kept.
	gens := d.db.cache.generations(names)
	lag := !fresh && l.keeping.Load()
	now := time.Now()
	out := make([]listEntry, len(rows))
	var todo []int
	l.mu.Lock()
	for i, r := range rows {
		e, ok := l.entries[r.ID]
		switch {
		case ok && e.gen == gens[i] && e.row == r.ver:
			out[i] = e
		case ok && lag && now.Sub(e.at) < listLag && e.row == r.ver:
			out[i] = e // progress only: the keeper is on it
		default:
			todo = append(todo, i)
		}
	}
	l.mu.Unlock()
	// Rendered outside the lock: a request never waits for the keeper's
	// renders, nor the keeper for a request's.
	for _, i := range todo {
		t := own(rows[i].Task)
		v, err := d.view(t)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[i] = listEntry{task: t, row: rows[i].ver, gen: gens[i], at: now, view: v, json: redact.Encoded(b)}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.entries == nil {
		l.entries = map[string]listEntry{}
	}
	for _, i := range todo {
		e := out[i]
		if old, ok := l.entries[e.task.ID]; ok && (old.gen > e.gen || old.row > e.row) {
			continue // a newer render landed meanwhile
		}
		l.entries[e.task.ID] = e
	}
	if len(l.entries) > len(rows) {
		// Finished sessions' old tasks go.
		cur := make(map[string]bool, len(rows))
		for _, r := range rows {
			cur[r.ID] = true
		}
		for id := range l.entries {
			if !cur[id] {
				delete(l.entries, id)
			}
		}
	}
	return out, nil
}

// readList is listed for a request: it also keeps the keeper going.
func (d *Daemon) readList() ([]listEntry, error) {
	d.list.lastRead.Store(time.Now().UnixNano())
	return d.listed(false)
}

// changedView wakes the keeper: something a view shows changed.
func (l *listView) changedView() {
	if l.kick == nil {
		return
	}
	select {
	case l.kick <- struct{}{}:
	default: // already woken: it will see this change too
	}
}

// keepList renders the views as they change while someone reads the list,
// until ctx ends.
func (d *Daemon) keepList(ctx context.Context) {
	l := &d.list
	l.keeping.Store(true)
	defer l.keeping.Store(false)
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kick:
		}
		if time.Since(time.Unix(0, l.lastRead.Load())) > listFollowed {
			continue
		}
		if _, err := d.listed(true); err != nil {
			// A request renders what it needs, and says why it
			// cannot.
			continue
		}
	}
}

// put takes back a body listJSON gave once it is sent.
func (l *listView) put(b []byte) {
	l.bodies.Put(&b)
}

// listJSON is the list as GET /api/tasks sends it (to be given back with
// put when sent): the same bytes as
// marshalling List's views whole and masking them (masking is per string
// value).
func (d *Daemon) listJSON() ([]byte, error) {
	es, err := d.readList()
	if err != nil {
		return nil, err
	}
	n := 3
	for _, e := range es {
		n += len(e.json) + 1
	}
	var b []byte
	if p, ok := d.list.bodies.Get().(*[]byte); ok && cap(*p) >= n {
		b = (*p)[:0]
	} else {
		b = make([]byte, 0, n+n/8)
	}
	b = append(b, '[')
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.json...)
	}
	return append(b, ']', '\n'), nil
}
