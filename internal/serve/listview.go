package serve

import (
	"encoding/json"
	"reflect"
	"sync"

	"ralph/internal/redact"
	"ralph/internal/store"
)

// listView answers GET /api/tasks from memory. Rendering every task's view
// on every request cost the list of 200 tasks about 3 ms of a core, under
// load the core the loops also wait for, so a dashboard polling it slowed
// both. Now the current tasks are read again only after a task row was
// written, and a task's view (masked JSON, as the API sends it) is rendered
// again only after its row or its session's generation moved: a saved
// iteration, a new status of its loop, the watchdog's look (viewCache).
// The generations are read before what they cover, so a change that lands
// during a render makes the next request render again, never a stale view
// kept.
type listView struct {
	mu      sync.Mutex
	read    bool
	tasksAt uint64 // the task rows' generation tasks was read at
	tasks   []Task
	entries map[string]listEntry // by task id
}

type listEntry struct {
	task Task   // as rendered
	gen  uint64 // its session's generation when rendered
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

// listed is each session's current task with its view, in creation order.
func (d *Daemon) listed() ([]listEntry, error) {
	l := &d.list
	l.mu.Lock()
	defer l.mu.Unlock()
	if tg := d.db.cache.tasksGen(); !l.read || tg != l.tasksAt {
		tasks, err := d.db.CurrentTasks()
		if err != nil {
			return nil, err
		}
		l.tasks, l.tasksAt, l.read = tasks, tg, true
	}
	names := make([]string, len(l.tasks))
	for i, t := range l.tasks {
		names[i] = t.Session
	}
	_, gens := d.db.cache.generations(names)
	out := make([]listEntry, len(l.tasks))
	fresh := make(map[string]listEntry, len(l.tasks))
	for i, t := range l.tasks {
		e, ok := l.entries[t.ID]
		if !ok || e.gen != gens[i] || !reflect.DeepEqual(e.task, t) {
			v, err := d.view(t)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			e = listEntry{task: t, gen: gens[i], view: v, json: redact.JSON(b)}
		}
		out[i], fresh[t.ID] = e, e
	}
	l.entries = fresh // finished sessions' old tasks go
	return out, nil
}

// listJSON is the list as GET /api/tasks sends it: the same bytes as
// marshalling List's views whole and masking them (masking is per string
// value).
func (d *Daemon) listJSON() ([]byte, error) {
	es, err := d.listed()
	if err != nil {
		return nil, err
	}
	n := 3
	for _, e := range es {
		n += len(e.json) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.json...)
	}
	return append(b, ']', '\n'), nil
}
