package httpcap

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Limiter keeps the number of open connections at or under its limit
// without ever turning a newcomer away: an attacker holding every slot
// must not lock out the token holder. A connection accepted over the
// limit makes the limiter close the least useful one, in this order:
//
//  1. never used (StateNew: it has not sent a whole request header yet),
//  2. idle between requests (StateIdle),
//  3. serving a request (StateActive),
//  4. an event stream (Stream), which a token holder opened,
//
// and the one longest in its state first. Silent and slow connections go
// before anyone who is being answered.
type Limiter struct {
	max   int
	mu    sync.Mutex
	seq   uint64
	conns map[net.Conn]*tracked
	shed  uint64
	// write is the server's WriteTimeout, which Stream gives each write.
	write time.Duration
}

type tracked struct {
	lim    *Limiter
	conn   net.Conn
	state  http.ConnState
	stream bool
	since  uint64 // when it entered its state, in the limiter's own count
}

// NewLimiter keeps at most max connections.
func NewLimiter(max int) *Limiter {
	return &Limiter{max: max, conns: map[net.Conn]*tracked{}}
}

// Max is the limit.
func (l *Limiter) Max() int { return l.max }

// Open is how many connections are open.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Shed is how many connections the limiter has closed.
func (l *Limiter) Shed() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shed
}

func (l *Limiter) add(c net.Conn) {
	l.mu.Lock()
	l.seq++
	l.conns[c] = &tracked{lim: l, conn: c, state: http.StateNew, since: l.seq}
	var victims []net.Conn
	for len(l.conns) > l.max {
		v := l.victimLocked(c)
		if v == nil {
			break
		}
		victims = append(victims, v)
	}
	l.mu.Unlock()
	for _, v := range victims {
		_ = v.Close()
	}
}

// shedOne closes the least useful connection (the process ran out of
// something a connection holds).
func (l *Limiter) shedOne() {
	l.mu.Lock()
	v := l.victimLocked(nil)
	l.mu.Unlock()
	if v != nil {
		_ = v.Close()
	}
}

// victimLocked forgets and returns the connection to close, never keep.
func (l *Limiter) victimLocked(keep net.Conn) net.Conn {
	var best *tracked
	for c, t := range l.conns {
		if c == keep {
			continue
		}
		if best == nil || rank(t) < rank(best) || rank(t) == rank(best) && t.since < best.since {
			best = t
		}
	}
	if best == nil {
		return nil
	}
	delete(l.conns, best.conn)
	l.shed++
	return best.conn
}

func rank(t *tracked) int {
	switch {
	case t.stream:
		return 3
	case t.state == http.StateNew:
		return 0
	case t.state == http.StateIdle:
		return 1
	}
	return 2
}

// ConnState is the http.Server hook that follows each connection.
func (l *Limiter) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.conns[c]
	if t == nil {
		return // shed already, or not accepted through the limiter
	}
	switch s {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
		return
	case http.StateIdle:
		t.stream = false
	}
	l.seq++
	t.state, t.since = s, l.seq
}

func (l *Limiter) lookup(c net.Conn) *tracked {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns[c]
}

func (l *Limiter) markStream(t *tracked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t.stream = true
}
