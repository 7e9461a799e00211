//go:build linux

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// postBig sends a POST of size bytes of JSON-ish filler to path on addr,
// chunked or with its length declared, and returns the answer's status
// and how much of the body went out before the daemon answered.
func postBig(t *testing.T, addr, path string, size int64, chunked bool, headers map[string]string) (int, int64) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	var hdr strings.Builder
	fmt.Fprintf(&hdr, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", path, addr)
	if chunked {
		hdr.WriteString("Transfer-Encoding: chunked\r\n")
	} else {
		fmt.Fprintf(&hdr, "Content-Length: %d\r\n", size)
	}
	for k, v := range headers {
		fmt.Fprintf(&hdr, "%s: %s\r\n", k, v)
	}
	hdr.WriteString("\r\n")
	if _, err := c.Write([]byte(hdr.String())); err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	var answered atomic.Bool
	go func() {
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for sent.Load() < size && !answered.Load() {
			var err error
			if chunked {
				_, err = fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk)
			} else {
				_, err = c.Write(chunk)
			}
			if err != nil {
				return
			}
			sent.Add(int64(len(chunk)))
		}
		if chunked {
			_, _ = c.Write([]byte("0\r\n\r\n"))
		}
	}()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	answered.Store(true)
	if err != nil {
		t.Fatalf("POST %s of %d bytes: no answer: %v", path, size, err)
	}
	res.Body.Close()
	return res.StatusCode, sent.Load()
}

// An oversized webhook body is refused with 413 without the daemon
// holding it: 40 MB unsigned, declared or streamed, leaves its peak
// memory where it was, and a signed one is read no further than GitHub's
// 25 MiB. The daemon answers the token holder afterwards.
func TestServeRefusesOversizedBodies(t *testing.T) {
	r := newRequestRig(t, script.Script{})
	r.Start(1)
	pid := r.Pid()
	token := strings.TrimSpace(readFile(t, r.Home+"/api-token"))
	if code, _ := r.API("GET", "/api/tasks", token, ""); code != 200 {
		t.Fatalf("before: %d", code)
	}
	peak, rss := servetest.PeakRSS(pid), servetest.RSS(pid)
	const size = 40 << 20
	gh := map[string]string{"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-big"}
	if code, sent := postBig(t, r.Addr, "/webhooks/github", size, false, gh); code != http.StatusRequestEntityTooLarge {
		t.Errorf("40 MB declared, unsigned: %d, want 413 (%d bytes sent)", code, sent)
	}
	if code, _ := postBig(t, r.Addr, "/webhooks/github", size, true, gh); code != http.StatusUnauthorized {
		t.Errorf("40 MB streamed, unsigned: %d, want 401 before reading it", code)
	}
	if code, _ := postBig(t, r.Addr, "/api/tasks", size, true, map[string]string{"Authorization": "Bearer " + token}); code != http.StatusRequestEntityTooLarge {
		t.Errorf("40 MB to the API: %d, want 413", code)
	}
	grew := servetest.PeakRSS(pid) - peak
	t.Logf("peak resident memory %d MB (+%d MB), resident %d MB → %d MB", servetest.PeakRSS(pid)>>20, grew>>20, rss>>20, servetest.RSS(pid)>>20)
	if grew > 20<<20 {
		t.Errorf("the daemon's peak memory grew by %d MB for bodies it refused", grew>>20)
	}
	signed := map[string]string{"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d-big2", "X-Hub-Signature-256": "sha256=00"}
	if code, sent := postBig(t, r.Addr, "/webhooks/github", size, true, signed); code != http.StatusRequestEntityTooLarge || sent >= size {
		t.Errorf("40 MB streamed, forged signature: %d after %d bytes, want 413 before the end", code, sent)
	}
	t.Logf("after a forged signed one: peak %d MB", servetest.PeakRSS(pid)>>20)
	if code, body := r.API("GET", "/api/tasks", token, ""); code != 200 {
		t.Errorf("after the bodies: %d %s", code, body)
	}
	if code := r.webhook("ping", "d-ping", `{"zen":"ok"}`, whSecret); code >= 400 {
		t.Errorf("a real delivery after the bodies: %d", code)
	}
}

// A flood of silent and idle connections from loopback, many times the
// daemon's connection limit and more than its open-file limit, neither
// locks out the token holder nor halts a running task: the daemon sheds
// the flood's connections instead of running out of descriptors.
func TestServeConnectionFlood(t *testing.T) {
	const token = "flood-token-0123456789"
	r := servetest.New(t, servetest.Options{Token: token})
	// Five iterations of a second each, then done: the task runs through
	// the flood.
	its := make([]script.Iteration, 5)
	for i := range its {
		its[i] = script.Iteration{Sleep: script.Duration(time.Second), Files: map[string]string{fmt.Sprintf("f%d.txt", i): "x\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-f", "Step."+servetest.RalphStatus("IN_PROGRESS", false, 5-i))}}
	}
	its[4].StdoutLines = []json.RawMessage{servetest.ResultLine("sess-f", "Done."+servetest.CompleteStatus)}
	r.Session("f", script.Script{Iterations: its})
	r.Extra = []string{"--max-connections", "64"}
	r.Start(1)
	// 256 open files: without the limit the flood takes them all.
	lim := unix.Rlimit{Cur: 256, Max: 256}
	if err := unix.Prlimit(r.Pid(), unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Fatalf("prlimit: %v", err)
	}
	r.OK("start", "f", "Through the flood")
	r.OK("loop", "f")

	const open, dials, floodFor = 1500, 6000, 8 * time.Second
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var dialed, shed atomic.Int64
	slots := make(chan struct{}, open)
	addr := r.Addr
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for dialed.Load() < dials {
				select {
				case <-stop:
					return
				case slots <- struct{}{}:
				}
				dialed.Add(1)
				// Four dialers at most 500 a second each: thousands of
				// connections, which a 2-core machine can still run.
				time.Sleep(2 * time.Millisecond)
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					<-slots
					continue
				}
				wg.Add(1)
				go func(idle bool) {
					defer wg.Done()
					defer func() { <-slots }()
					defer c.Close()
					br := bufio.NewReader(c)
					if idle {
						// A keep-alive connection that asked once, then waits.
						fmt.Fprintf(c, "GET /api/tasks HTTP/1.1\r\nHost: x\r\n\r\n")
						if res, err := http.ReadResponse(br, nil); err == nil {
							res.Body.Close()
						}
					}
					done := make(chan struct{})
					go func() {
						defer close(done)
						_, _ = br.ReadByte() // returns when the daemon closes it
					}()
					select {
					case <-done:
						shed.Add(1)
					case <-stop:
					}
				}(w%2 == 1)
			}
		}()
	}
	// The token holder asks every quarter second throughout.
	var slowest time.Duration
	var failures []string
	start := time.Now()
	for time.Since(start) < floodFor {
		t0 := time.Now()
		code, body, err := servetest.Request(r.Addr, token, "GET", "/api/tasks", "")
		d := time.Since(t0)
		slowest = max(slowest, d)
		if err != nil || code != 200 || d > 5*time.Second {
			failures = append(failures, fmt.Sprintf("after %v: %d %v %.80s (%v)", t0.Sub(start).Round(time.Millisecond), code, err, body, d))
		}
		time.Sleep(250 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("flood: %d connections dialed, %d closed by the daemon; the token holder's slowest answer %v", dialed.Load(), shed.Load(), slowest)
	if len(failures) > 0 {
		t.Errorf("the token holder was not answered %d times:\n%s", len(failures), strings.Join(failures, "\n"))
	}
	if dialed.Load() < 1000 {
		t.Errorf("only %d connections dialed: no flood", dialed.Load())
	}
	v := r.WaitFor("f", "the task to finish", func(v serve.TaskView) bool {
		return v.State != "running" && v.State != "queued" && v.State != "waiting"
	})
	if v.State != "done" {
		t.Errorf("the task ended %s (%s): %s", v.State, v.ExitReason, v.Message)
	}
	if strings.Contains(r.Log.String(), "too many open files") {
		t.Errorf("the daemon ran out of files:\n%s", r.Log.String())
	}
}
