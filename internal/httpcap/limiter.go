package httpcap

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter keeps the number of open connections at or under its limit
// without ever turning a newcomer away: an attacker holding every slot
// must not lock out the token holder. A connection accepted over the
// limit makes the limiter close the least useful one, in this order:
//
//  1. silent: the server read from it at least quietAfter ago and it has
//     not sent a whole request header yet,
//  2. idle between requests (StateIdle),
//  3. not read yet: the server has not got round to it,
//  4. talking: not yet served, but the kernel holds bytes it sent,
//  5. serving a request (StateActive),
//  6. an event stream (Stream), which only a token holder opens,
//
// and the one longest in its state first. Silent and slow connections go
// before anyone who is being answered, and a client that spoke is not
// shed because the server was too busy to read it: under a flood of
// thousands of connections a second the server accepts many before it
// reads one.
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
	// talkingAt is when the kernel last held bytes from it that the
	// server had not read (UnixNano; 0: never). It protects the
	// connection for quietAfter, then the kernel is asked again: a slow
	// sender whose bytes were read is silent again.
	talkingAt int64
	since     uint64 // when it entered its state, in the limiter's own count
	// readAt is when the server first read from it (UnixNano; 0: not
	// yet).
	readAt atomic.Int64
}

// quietAfter is how long a connection the server has read from may stay
// silent before it is shed as silent: a client is connected before it
// writes its request, and a busy machine may run it late.
const quietAfter = 100 * time.Millisecond

// conn is an accepted connection that tells its tracker when the server
// first reads it.
type conn struct {
	net.Conn
	t *tracked
}

func (c *conn) Read(p []byte) (int, error) {
	if c.t.readAt.Load() == 0 {
		c.t.readAt.Store(time.Now().UnixNano())
	}
	return c.Conn.Read(p)
}

// CloseWrite and ReadFrom keep what net/http does with a TCP connection:
// a half-close before closing (so the client reads a refusal) and
// sendfile.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
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

// add tracks an accepted connection and returns it as the server must
// use it.
func (l *Limiter) add(raw net.Conn) net.Conn {
	t := &tracked{lim: l, state: http.StateNew}
	c := &conn{Conn: raw, t: t}
	t.conn = c
	l.mu.Lock()
	l.seq++
	t.since = l.seq
	l.conns[c] = t
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
	return c
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
	now := time.Now().UnixNano()
	quiet := now - int64(quietAfter)
	var best *tracked
	var bestRank int
	for {
		best = nil
		for c, t := range l.conns {
			if c == keep {
				continue
			}
			r := rank(t, quiet)
			if best == nil || r < bestRank || r == bestRank && t.since < best.since {
				best, bestRank = t, r
			}
		}
		if best == nil {
			return nil
		}
		// The kernel is asked only about the one about to go, mostly a
		// silent one: a syscall or two per accept under a flood.
		if bestRank > rankUnread || pending(best.conn.(*conn).Conn) <= 0 {
			break
		}
		best.talkingAt = now
	}
	delete(l.conns, best.conn)
	l.shed++
	return best.conn
}

const (
	rankSilent = iota
	rankIdle
	rankUnread
	rankTalking
	rankServing
	rankStream
)

// rank is t's place in the shedding order; quiet is the time (UnixNano)
// before which a first read makes a connection silent and a sign of
// talking has worn off.
func rank(t *tracked, quiet int64) int {
	switch {
	case t.stream:
		return rankStream
	case t.talkingAt > quiet:
		return rankTalking
	case t.state == http.StateNew && t.readAt.Load() != 0 && t.readAt.Load() < quiet:
		return rankSilent
	case t.state == http.StateIdle:
		return rankIdle
	case t.state == http.StateNew:
		return rankUnread
	}
	return rankServing
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
	t.state, t.since, t.talkingAt = s, l.seq, 0
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
