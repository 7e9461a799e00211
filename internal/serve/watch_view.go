package serve

import (
	"sort"
	"sync"
	"time"
)

// WatchStatus is what the watchdog knows of one session: the tmux target
// it reads, whether that target exists, and what it last picked up.
type WatchStatus struct {
	Session string    `json:"session"`
	Target  string    `json:"target"`
	Active  bool      `json:"active"`            // the target exists and is read
	TaskID  string    `json:"task_id,omitempty"` // the task it keeps current
	Seen    time.Time `json:"seen,omitempty"`    // the last capture that changed something
	Status  string    `json:"status,omitempty"`  // STATUS of the last block read
	Message string    `json:"message,omitempty"` // why it is not active, when it is not
}

// watchBoard holds the watchdog's latest word per session; the watchdog
// writes it, the API and chat read it.
type watchBoard struct {
	mu sync.Mutex
	by map[string]WatchStatus
}

func (b *watchBoard) set(w WatchStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by = map[string]WatchStatus{}
	}
	b.by[w.Session] = w
}

func (b *watchBoard) get(session string) (WatchStatus, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.by[session]
	return w, ok
}

func (b *watchBoard) all() []WatchStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]WatchStatus, 0, len(b.by))
	for _, w := range b.by {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out
}

// Watchdog reports what the watchdog watches, one entry per session it
// has looked at, by session name (an empty list before its first look or
// when it is off).
func (d *Daemon) Watchdog() []WatchStatus { return d.watch.all() }
