package httpcap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/syncbuf"
)

// TestMain doubles as a server whose process may open only a few files
// (the accept-EMFILE test runs it).
func TestMain(m *testing.M) {
	if os.Getenv("HTTPCAP_FEW_FILES") != "" {
		os.Exit(fewFilesServer())
	}
	os.Exit(m.Run())
}

func fewFilesServer() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	rl := syscall.Rlimit{Cur: 32, Max: 32}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		fmt.Println(err)
		return 1
	}
	// A limit far above what the process can open: only the shedding on
	// EMFILE can keep it answering.
	srv := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), 1000, os.Stderr)
	fmt.Println(ln.Addr())
	_ = srv.Serve(ln)
	return 0
}

// A process out of file descriptors keeps accepting: the accept's EMFILE
// sheds the oldest silent connection, and a newcomer is answered long
// before any timeout would have freed a descriptor.
func TestServeOutOfFiles(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HTTPCAP_FEW_FILES=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the server did not start: %v %s", err, stderr.String())
	}
	addr := strings.TrimSpace(line)
	for i := range 80 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("silent connection %d: %v", i, err)
		}
		defer c.Close()
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a newcomer while out of files: %v\nserver: %s", err, stderr.String())
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("answer %q", b)
	}
	if !strings.Contains(stderr.String(), "too many open files") {
		t.Errorf("the server never ran out of files; the test proves nothing:\n%s", stderr.String())
	}
	t.Logf("answered in %v", time.Since(start))
}

// errListener fails its first accepts with errs.
type errListener struct {
	net.Listener
	errs []error
}

func (l *errListener) Accept() (net.Conn, error) {
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	return l.Listener.Accept()
}

// No accept error stops the server: EMFILE, which net/http already
// retries, and ENOBUFS or EPROTO, which it would return from Serve.
func TestServeSurvivesAcceptErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accept := func(e syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", e)}
	}
	el := &errListener{Listener: ln, errs: []error{accept(syscall.EMFILE), accept(syscall.ENOBUFS), accept(syscall.EPROTO), accept(syscall.ENOMEM)}}
	srv := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), 10, io.Discard)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(el) }()
	t.Cleanup(func() { srv.Close() })
	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Get("http://" + ln.Addr().String() + "/")
	select {
	case err := <-done:
		t.Fatalf("Serve returned: %v", err)
	default:
	}
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	srv.Close()
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func shortServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ms := 300 * time.Millisecond
	srv := newServer(h, 100, io.Discard, timeouts{readHeader: ms, read: ms, write: ms, idle: ms})
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// The timeouts end a silent connection, a slow body and an idle
// keep-alive connection, and leave an event stream open past all of them.
func TestTimeouts(t *testing.T) {
	addr := shortServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			beforeWrite := Stream(w, r)
			for i := range 12 {
				beforeWrite()
				fmt.Fprintf(w, "data: %d\n\n", i)
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
			return
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		io.WriteString(w, "ok")
	}))
	closedWithin := func(t *testing.T, c net.Conn, d time.Duration) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(d))
		start := time.Now()
		_, err := io.Copy(io.Discard, c)
		if err != nil {
			t.Errorf("not closed within %v: %v", d, err)
		} else {
			t.Logf("closed after %v", time.Since(start).Round(time.Millisecond))
		}
	}
	t.Run("silent", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		closedWithin(t, c, 2*time.Second)
	})
	t.Run("slow body", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
		start := time.Now()
		for i := 0; i < 100; i++ {
			if _, err := c.Write([]byte("x")); err != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
			if time.Since(start) > 3*time.Second {
				break
			}
		}
		b, _ := io.ReadAll(c)
		if strings.Contains(string(b), "ok") {
			t.Errorf("a body trickled over %v was read whole", time.Since(start))
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		closedWithin(t, c, 2*time.Second)
	})
	t.Run("stream", func(t *testing.T) {
		res, err := http.Get("http://" + addr + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil || !strings.Contains(string(b), "data: 11") {
			t.Errorf("the stream ended early (%v): %q", err, b)
		}
	})
}

// A request header over HeaderBytes is refused (431) before any handler.
func TestHeaderCap(t *testing.T) {
	addr := shortServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	for size, want := range map[int]int{1 << 10: 200, HeaderBytes + 8<<10: 431} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.Header.Set("X-Big", strings.Repeat("x", size))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("a %d-byte header: %d, want %d", size, res.StatusCode, want)
		}
	}
}

// The server's error lines reach the log at most once a second, with a
// count of those left out.
func TestSparseLog(t *testing.T) {
	var b strings.Builder
	l := &sparseLog{w: &b}
	for range 100 {
		fmt.Fprintln(l, "http: Accept error: too many open files")
	}
	if n := strings.Count(b.String(), "\n"); n != 1 {
		t.Errorf("%d lines of 100 in a moment:\n%s", n, b.String())
	}
	l.last = time.Now().Add(-2 * time.Second)
	fmt.Fprintln(l, "http: Accept error: too many open files")
	if !strings.Contains(b.String(), "(99 more such lines") {
		t.Errorf("the left-out lines are not counted:\n%s", b.String())
	}
}
