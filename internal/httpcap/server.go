package httpcap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// The server's timeouts. A request has ReadHeaderTimeout for its header
// and ReadTimeout for the whole of it (a 25 MiB webhook at 0.5 MB/s); its
// answer WriteTimeout; a keep-alive connection waits IdleTimeout for the
// next request. An event stream (Stream) has no read deadline and
// WriteTimeout for each write instead.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 60 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 60 * time.Second
)

// DefaultMaxConns is the connection limit unless one is set; it is kept
// under half the process's open-file limit (the rest is the database,
// logs, agents and git), see MaxConnsFor.
const DefaultMaxConns = 1024

// MaxConnsFor is the default connection limit for a process allowed
// nofile open files.
func MaxConnsFor(nofile uint64) int {
	if nofile == 0 || nofile/2 >= DefaultMaxConns {
		return DefaultMaxConns
	}
	return max(int(nofile/2), 16)
}

// DefaultMaxConnsHere is MaxConnsFor this process's open-file limit.
func DefaultMaxConnsHere() int { return MaxConnsFor(openFileLimit()) }

// Server is an http.Server with the caps: the timeouts, HeaderBytes and
// a connection limit that sheds (Limiter).
type Server struct {
	*http.Server
	Limiter *Limiter
}

// NewServer serves h keeping at most maxConns connections (0: the
// default); log receives the server's own errors (nil: discarded).
func NewServer(h http.Handler, maxConns int, logw io.Writer) *Server {
	return newServer(h, maxConns, logw, timeouts{ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout})
}

// timeouts are the server's; tests shorten them.
type timeouts struct{ readHeader, read, write, idle time.Duration }

func newServer(h http.Handler, maxConns int, logw io.Writer, tm timeouts) *Server {
	if maxConns <= 0 {
		maxConns = DefaultMaxConnsHere()
	}
	if logw == nil {
		logw = io.Discard
	}
	lim := NewLimiter(maxConns)
	lim.write = tm.write
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: tm.readHeader,
		ReadTimeout:       tm.read,
		WriteTimeout:      tm.write,
		IdleTimeout:       tm.idle,
		MaxHeaderBytes:    HeaderBytes,
		ConnState:         lim.ConnState,
		ConnContext:       lim.connContext,
		ErrorLog:          log.New(&sparseLog{w: logw}, "ralph serve: ", 0),
	}
	return &Server{Server: srv, Limiter: lim}
}

// Serve accepts connections on ln until Shutdown or Close. No accept
// error stops it: out of file descriptors (EMFILE), out of buffers
// (ENOBUFS) or anything else the kernel says, it sheds a connection and
// tries again after net/http's back-off (5 ms doubling to 1 s).
func (s *Server) Serve(ln net.Listener) error {
	return s.Server.Serve(&listener{Listener: ln, lim: s.Limiter})
}

type listener struct {
	net.Listener
	lim *Limiter
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		// A descriptor freed now lets the retry succeed instead of waiting
		// for some connection to time out.
		l.lim.shedOne()
		return nil, temporary{err}
	}
	return l.lim.add(c), nil
}

// temporary makes net/http retry an accept error instead of returning
// it: Serve only retries errors that say they are temporary, and ENOBUFS,
// ENOMEM or EPROTO do not.
type temporary struct{ error }

func (temporary) Temporary() bool { return true }
func (temporary) Timeout() bool   { return false }
func (t temporary) Unwrap() error { return t.error }

// Stream readies w for a long-lived response (Server-Sent Events): the
// request's read deadline is lifted (ReadTimeout would end the stream)
// and its connection is the last to be shed. Call the returned func before
// each write: it gives that write WriteTimeout, so a reader that stopped
// reading is let go.
func Stream(w http.ResponseWriter, r *http.Request) (beforeWrite func()) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	if t, ok := r.Context().Value(connKey{}).(*tracked); ok && t.lim != nil {
		t.lim.markStream(t)
	}
	write := WriteTimeout
	if t, ok := r.Context().Value(connKey{}).(*tracked); ok && t.lim != nil && t.lim.write > 0 {
		write = t.lim.write
	}
	return func() { _ = rc.SetWriteDeadline(time.Now().Add(write)) }
}

type connKey struct{}

func (l *Limiter) connContext(ctx context.Context, c net.Conn) context.Context {
	if t := l.lookup(c); t != nil {
		return context.WithValue(ctx, connKey{}, t)
	}
	return ctx
}

// sparseLog passes on at most one of the server's error lines a second:
// out of descriptors, net/http logs every failed accept, and a flood must
// not become a flood of the daemon's log.
type sparseLog struct {
	w       io.Writer
	mu      sync.Mutex
	last    time.Time
	dropped int
}

func (s *sparseLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.Sub(s.last) < time.Second {
		s.dropped++
		return len(p), nil
	}
	s.last = now
	if s.dropped > 0 {
		fmt.Fprintf(s.w, "ralph serve: (%d more such lines in the last second not shown)\n", s.dropped)
		s.dropped = 0
	}
	return s.w.Write(p)
}
