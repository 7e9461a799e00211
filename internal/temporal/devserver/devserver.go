// Package devserver runs the Temporal CLI's dev server for tests: a real
// Temporal (frontend, history, matching, SQLite persistence) in one
// process on free ports, which can be killed and restarted on the same
// database. The CLI is built by scripts/install-temporal-cli.sh.
package devserver

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"ralph/internal/bintest"
	"ralph/internal/syncbuf"
)

// Version is the Temporal CLI the tests run, and SQLiteVersion the
// modernc.org/sqlite it is built with (scripts/install-temporal-cli.sh).
const (
	Version       = "v1.5.1"
	SQLiteVersion = "v1.44.3"
)

// Binary finds the Temporal CLI: $RALPH_TEMPORAL_CLI, else the script's
// cache.
func Binary() (string, error) {
	return bintest.Cached("RALPH_TEMPORAL_CLI", "temporal-"+Version+"-sqlite-"+SQLiteVersion, "temporal", "scripts/install-temporal-cli.sh")
}

// SQLiteFlags are the SQLite settings ralph runs the dev server with: a
// write-ahead log synced at checkpoints instead of a rollback journal synced
// at every commit. The dev server's own default syncs each of its writes
// (about five per iteration, each a transaction) two or three times, and
// its single writer waits on them; with these a process killed at any
// point loses nothing, only a machine that loses power may lose the last
// writes. For the dev server alone: a cluster's database has its own.
func SQLiteFlags() []string {
	return []string{"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal"}
}

// EagerFlags let the server hand the agent call a decision schedules to
// the worker that made it (docs/temporal.md).
func EagerFlags() []string {
	return []string{"--dynamic-config-value", "system.enableActivityEagerExecution=true"}
}

// Args are the CLI's arguments for a headless dev server on 127.0.0.1 at
// these ports with its database in db, logging errors only; SQLiteFlags
// and EagerFlags are ralph's settings on top.
func Args(port, httpPort, metricsPort int, db string) []string {
	return []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", strconv.Itoa(httpPort), "--metrics-port", strconv.Itoa(metricsPort), "--db-filename", db, "--log-level", "error"}
}

// Server is one dev server.
type Server struct {
	Addr string // the frontend, HOST:PORT
	// Metrics is its Prometheus endpoint, HOST:PORT (Counters).
	Metrics string
	DB      string
	bin     string
	args    []string
	cmd     *exec.Cmd
	log     *syncbuf.Buffer
	t       testing.TB
}

// Start runs a dev server on free ports with its database in db; it is
// killed when the test ends. Without the CLI the test is skipped, except
// on CI (CI=true), where it fails.
func Start(t testing.TB, db string) *Server {
	t.Helper()
	bin, err := Binary()
	bintest.Need(t, err)
	port, httpPort, metrics := bintest.FreePort(t), bintest.FreePort(t), bintest.FreePort(t)
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Metrics: "127.0.0.1:" + strconv.Itoa(metrics), DB: db, bin: bin, log: &syncbuf.Buffer{}, t: t,
		args: append(append(Args(port, httpPort, metrics, db), SQLiteFlags()...), EagerFlags()...)}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("temporal dev server log:\n%s", s.log.String())
		}
	})
	s.Restart()
	return s
}

// Restart starts the server again (on the same ports and database) and
// waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// Its own process group, so a kill reaches nothing of the test's.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: s.Addr})
		cancel()
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("temporal dev server did not answer on %s:\n%s", s.Addr, s.log.String())
}

// Kill ends the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Client dials the server with the SDK's log kept quiet; it is closed when
// the test ends.
func (s *Server) Client() client.Client {
	s.t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.Addr,
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(c.Close)
	return c
}

// Counters reads the server's request counters once ready says they hold
// what the test waits for, or, with ready nil, once two reads a second
// apart agree: the server reports what it counted a moment later.
func (s *Server) Counters(ready func(Counters) bool) Counters {
	s.t.Helper()
	var last Counters
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := ReadCounters(s.Metrics, nil)
		if err != nil {
			s.t.Fatalf("temporal dev server metrics: %v", err)
		}
		switch {
		case ready != nil && ready(c), ready == nil && last != nil && maps.Equal(c, last):
			return c
		case time.Now().After(deadline):
			s.t.Fatalf("temporal dev server metrics: not there after 30 s: %v", c)
		}
		last = c
		if ready != nil {
			time.Sleep(200 * time.Millisecond)
		} else {
			time.Sleep(time.Second)
		}
	}
}
