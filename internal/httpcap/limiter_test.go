package httpcap

import (
	"net"
	"net/http"
	"testing"
)

// fakeConn is a connection that records its closing.
type fakeConn struct {
	net.Conn
	name   string
	closed bool
}

func (c *fakeConn) Close() error { c.closed = true; return nil }

// Over the limit the limiter closes the least useful connection: never
// used, then idle, then serving, then a stream; the longest in its state
// first; never the newcomer.
func TestLimiterSheds(t *testing.T) {
	type step struct {
		conn   string
		state  http.ConnState // 0 with stream false: a new connection
		stream bool
	}
	for _, c := range []struct {
		name  string
		steps []step
		shed  []string // closed, in any order
	}{
		{"under the limit nothing is shed", []step{{conn: "a"}, {conn: "b"}, {conn: "c"}}, nil},
		{"the oldest never-used goes first", []step{{conn: "a"}, {conn: "b"}, {conn: "c"}, {conn: "d"}}, []string{"a"}},
		{"a silent connection before an idle one", []step{{conn: "a"}, {conn: "a", state: http.StateActive}, {conn: "a", state: http.StateIdle},
			{conn: "b"}, {conn: "c"}, {conn: "d"}}, []string{"b"}},
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
			for _, s := range c.steps {
				fc := conns[s.conn]
				switch {
				case fc == nil:
					fc = &fakeConn{name: s.conn}
					conns[s.conn] = fc
					l.add(fc)
				case s.stream:
					l.ConnState(fc, s.state)
					l.markStream(l.lookup(fc))
				default:
					l.ConnState(fc, s.state)
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
