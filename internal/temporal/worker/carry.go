package worker

import (
	"crypto/rand"
	"os"
	"sync"
	"syscall"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/trust"
)

// What a worker keeps from one call of a session to its next: the loop's
// settings as they were read, and the git snapshot the call took after
// it. `ralph run` and the local backend keep both for a whole run; a
// worker that read them afresh for every call paid a settings read, a
// `git rev-parse` and a `git status` per iteration.
//
// The settings are reused while the tree's .ralphrc, the trust record and
// the way they are read (confined, vouched) are as they were. The snapshot
// is the next call's before-snapshot only when the workflow says the call
// that took it was the last one it folded (IterateInput.Before): a call
// made elsewhere since, a retried attempt or a tree taken over gets a
// fresh one.

// carryIdle is how long a session's carry outlives its last call: a
// worker serves many sessions over its life and keeps none it is unlikely
// to see again.
const carryIdle = time.Hour

type carry struct {
	mu    sync.Mutex
	by    map[string]*carried // by session
	swept time.Time
}

type carried struct {
	// token names snap to the workflow (IterateOutput.After): "" when the
	// call left none to carry.
	token string
	snap  *gitx.Snap
	built buildKey
	spec  loop.Spec
	ads   []agent.Adapter
	used  time.Time
}

// buildKey is what a session's settings were read from.
type buildKey struct {
	dir, rc, vouched string
	confined         bool
	trust            fileStamp
}

// fileStamp tells a file's versions apart without reading it.
type fileStamp struct {
	ino, size, mtime int64
}

// trustStamp is the trust record's stamp: a .ralphrc trusted or revoked
// since the settings were read makes them read again.
func trustStamp() fileStamp {
	ts, err := trust.Default()
	if err != nil {
		return fileStamp{}
	}
	fi, err := os.Stat(ts.Path)
	if err != nil {
		return fileStamp{}
	}
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = int64(st.Ino)
	}
	return s
}

// take hands the session's carry over to its call (nil: none): a call
// running holds it alone, so two attempts of one call on one worker never
// share its agents.
func (c *carry) take(session string) *carried {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.by[session]
	delete(c.by, session)
	return k
}

// put keeps k for the session's next call.
func (c *carry) put(session string, k *carried) {
	now := time.Now()
	k.used = now
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]*carried{}
	}
	c.by[session] = k
	if now.Sub(c.swept) < carryIdle/4 {
		return
	}
	c.swept = now
	for s, old := range c.by {
		if now.Sub(old.used) > carryIdle {
			delete(c.by, s)
		}
	}
}

// newToken names a carried snapshot.
func newToken() string { return rand.Text() }
