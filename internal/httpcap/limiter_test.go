package httpcap

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// fakeConn is a connection that records its closing.
type fakeConn struct {
	net.Conn
	name   string
	closed bool
}

func (c *fakeConn) Close() error               { c.closed = true; return nil }
func (c *fakeConn) Read(p []byte) (int, error) { return 0, io.EOF }

// Over the limit the limiter closes the least useful connection: silent
// (read, no request yet), then idle, then not yet read, then serving, then
// a stream; the longest in its state first; never the newcomer.
func TestLimiterSheds(t *testing.T) {
	type step struct {
		conn     string
		state    http.ConnState // 0 with stream and read false: a new connection
		stream   bool
		read     bool // the server read it long ago (and found it silent)
		justRead bool // the server reads it now
	}
	for _, c := range []struct {
		name  string
		steps []step
		shed  []string // closed, in any order
	}{
		{"under the limit nothing is shed", []step{{conn: "a"}, {conn: "b"}, {conn: "c"}}, nil},
		{"the oldest never-read goes first", []step{{conn: "a"}, {conn: "b"}, {conn: "c"}, {conn: "d"}}, []string{"a"}},
		{"a silent connection before an older never-read one", []step{{conn: "a"}, {conn: "b"}, {conn: "b", read: true}, {conn: "c"}, {conn: "d"}}, []string{"b"}},
		{"a silent connection before an idle one", []step{{conn: "a"}, {conn: "a", state: http.StateActive}, {conn: "a", state: http.StateIdle},
			{conn: "b"}, {conn: "c"}, {conn: "c", read: true}, {conn: "d"}}, []string{"c"}},
		{"read just now is not yet silent", []step{{conn: "a"}, {conn: "b"}, {conn: "c"}, {conn: "a", justRead: true}, {conn: "d"}}, []string{"a"}},
		{"read long ago and silent", []step{{conn: "a"}, {conn: "b"}, {conn: "c"}, {conn: "b", read: true}, {conn: "d"}}, []string{"b"}},
		{"an idle one before a never-read one", []step{{conn: "a"}, {conn: "b"}, {conn: "b", state: http.StateActive}, {conn: "b", state: http.StateIdle},
			{conn: "c"}, {conn: "d"}}, []string{"b"}},
		{"idle before serving, the longest idle first", []step{{conn: "a"}, {conn: "b"}, {conn: "c"},
			{conn: "b", state: http.StateActive}, {conn: "b", state: http.StateIdle},
			{conn: "a", state: http.StateActive}, {conn: "a", state: http.StateIdle},
			{conn: "c", state: http.StateActive}, {conn: "d"}, {conn: "d", state: http.StateActive}, {conn: "e"}}, []string{"b", "a"}},
		{"a stream goes last", []step{{conn: "a"}, {conn: "a", state: http.StateActive, stream: true},
			{conn: "b"}, {conn: "b", state: http.StateActive}, {conn: "c"}, {conn: "c", state: http.StateActive}, {conn: "d"}}, []string{"b"}},
		{"when all stream, the oldest stream", []step{
			{conn: "a"}, {conn: "a", state: http.StateActive, stream: true},
			{conn: "b"}, {conn: "b", state: http.StateActive, stream: true},
			{conn: "c"}, {conn: "c", state: http.StateActive, stream: true}, {conn: "d"}}, []string{"a"}},
		{"a closed connection frees its place", []step{{conn: "a"}, {conn: "b"}, {conn: "c"}, {conn: "a", state: http.StateClosed}, {conn: "d"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := NewLimiter(3)
			conns := map[string]*fakeConn{}
			served := map[string]net.Conn{} // as the server sees them
			for _, s := range c.steps {
				fc := conns[s.conn]
				switch {
				case fc == nil:
					fc = &fakeConn{name: s.conn}
					conns[s.conn] = fc
					served[s.conn] = l.add(fc)
				case s.justRead:
					_, _ = served[s.conn].Read(make([]byte, 1))
				case s.read:
					// Read longer ago than quietAfter.
					l.lookup(served[s.conn]).readAt.Store(time.Now().Add(-time.Second).UnixNano())
				case s.stream:
					l.ConnState(served[s.conn], s.state)
					l.markStream(l.lookup(served[s.conn]))
				default:
					l.ConnState(served[s.conn], s.state)
				}
			}
			var shed []string
			for name, fc := range conns {
				if fc.closed {
					shed = append(shed, name)
				}
			}
			if len(shed) != len(c.shed) || !sameSet(shed, c.shed) {
				t.Errorf("shed %v, want %v", shed, c.shed)
			}
			if l.Open() > 3 {
				t.Errorf("%d open, over the limit", l.Open())
			}
		})
	}
}

func sameSet(a, b []string) bool {
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestMaxConnsFor(t *testing.T) {
	for nofile, want := range map[uint64]int{0: 1024, 1 << 20: 1024, 2048: 1024, 1024: 512, 256: 128, 20: 16} {
		if got := MaxConnsFor(nofile); got != want {
			t.Errorf("MaxConnsFor(%d) = %d, want %d", nofile, got, want)
		}
	}
}

// A connection whose bytes the kernel holds unread is not shed as silent,
// even when it is the oldest: the client spoke, the server was busy.
func TestLimiterSparesATalker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l := NewLimiter(2)
	var clients []net.Conn
	var served []net.Conn
	open := func(say string) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		if say != "" {
			if _, err := c.Write([]byte(say)); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close(); c.Close() })
		s := l.add(raw)
		served = append(served, s)
	}
	open("GET / HTTP/1.1\r\n") // the oldest, talking
	open("")                   // silent
	time.Sleep(50 * time.Millisecond)
	for _, s := range served {
		l.lookup(s).readAt.Store(time.Now().Add(-time.Second).UnixNano())
	}
	open("") // the newcomer
	buf := make([]byte, 1)
	_ = clients[1].SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := clients[1].Read(buf); err == nil || isTimeout(err) {
		t.Errorf("the silent connection was kept: %v", err)
	}
	_ = clients[0].SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := clients[0].Read(buf); !isTimeout(err) {
		t.Errorf("the talking connection was shed: %v", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
