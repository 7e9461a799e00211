// Command temporalload puts the fleet's two backends under the same load,
// one after the other on the same machine: N sessions, each looping one
// task with the scripted fake agent (1–3 s per call) to done. The local
// backend is one `ralph serve`; the Temporal backend is `ralph serve
// --backend temporal`, a Temporal dev server and W `ralph worker`
// processes. For each it prints the wall time from the first `loop` to the
// last task done, and the own CPU (agents excluded) of every ralph and
// Temporal process, in total and per iteration, and on Temporal the
// workflow tasks the workers completed per iteration.
//
// Linux only (/proc). Needs the Temporal CLI (scripts/install-temporal-cli.sh).
// Run from the repository root:
//
//	go run ./scripts/temporalload -tasks 200 -workers 2
//
// -backends local,temporal,bare adds the floor under both (bare.go).
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"ralph/internal/servetest"
	"ralph/internal/temporal/devserver"
	"ralph/scripts/internal/loadrig"
)

var (
	tasks      = flag.Int("tasks", 200, "sessions, each looping one task")
	workers    = flag.Int("workers", 2, "ralph worker processes (Temporal backend)")
	iterations = flag.Int("iterations", 5, "agent calls per task (the last one finishes it)")
	minCall    = flag.Duration("min-call", time.Second, "shortest agent call")
	maxCall    = flag.Duration("max-call", 3*time.Second, "longest agent call")
	backends   = flag.String("backends", "local,temporal", "backends to measure, in order: local, temporal, bare (no ralph: the least the same calls cost on Temporal), bare-update (no ralph: one activity per task, an update per decision)")
	keep       = flag.Bool("keep", false, "keep the work directory (a failed run always does)")
	prebuilt   = flag.String("ralph", "", "a ralph binary to measure instead of building this tree's (to compare builds)")
	eager      = flag.Bool("eager", true, "let the dev server hand a decision's activity to the worker that made it (system.enableActivityEagerExecution)")
	wal        = flag.Bool("wal", true, "run the dev server's SQLite with a write-ahead log synced at checkpoints, as ralph's tests and docs do (false: its default journal, synced at every commit)")
	dump       = flag.String("dump-metrics", "", "write the dev server's metrics at the end to this file")
	serverEnv  = flag.String("server-env", "", "more environment of the dev server, space-separated NAME=VALUE")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "temporalload:", err)
		os.Exit(1)
	}
}

type rig struct {
	work, ralph, fake string
	rnd               *rand.Rand
}

func run() (err error) {
	work, err := os.MkdirTemp("", "ralph-temporalload-")
	if err != nil {
		return err
	}
	defer func() {
		// A failed run keeps its logs: its error names them.
		if !*keep && err == nil {
			os.RemoveAll(work)
		}
	}()
	r := &rig{work: work, rnd: rand.New(rand.NewPCG(1, 2))}
	if r.ralph, r.fake, err = loadrig.Build(filepath.Join(work, "bin")); err != nil {
		return err
	}
	if *prebuilt != "" {
		r.ralph = *prebuilt
	}
	fmt.Printf("%d tasks of %d calls (%s–%s each), %d CPUs\n", *tasks, *iterations, *minCall, *maxCall, numCPU())
	for _, b := range strings.Split(*backends, ",") {
		if err := r.measure(strings.TrimSpace(b)); err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
	}
	return nil
}

// proc is a process whose own CPU is measured.
type proc struct {
	name string
	cmd  *exec.Cmd
}

func (r *rig) measure(backend string) error {
	base := filepath.Join(r.work, backend)
	if backend == "bare" || backend == "bare-update" {
		return r.bare(base, backend == "bare-update")
	}
	home := filepath.Join(base, "home")
	env := loadrig.Env(base, home)
	err := loadrig.Sessions(home, *tasks, func(name string) (string, error) {
		return loadrig.Project(base, name, r.ralph, r.fake, env, loadrig.AgentScript(r.rnd, *iterations, *minCall, *maxCall, false), false)
	})
	if err != nil {
		return err
	}
	l, err := newLauncher(base, env)
	if err != nil {
		return err
	}
	defer l.stop()
	addr := freeAddr()
	metricsPort := ""
	serveArgs := []string{r.ralph, "serve", "--home", home, "--listen", addr, "--max-parallel", strconv.Itoa(*tasks), "--watch-interval", "0"}
	if backend == "temporal" {
		var taddr string
		if taddr, metricsPort, err = startServer(base, l); err != nil {
			return err
		}
		for i := range *workers {
			// Enough calls at once on each worker for every loop to run.
			if _, err := l.start(fmt.Sprintf("worker %d", i+1), r.ralph, "worker", "--temporal-address", taddr,
				"--home", filepath.Join(base, fmt.Sprintf("worker-%d", i+1)), "--max-calls", strconv.Itoa(*tasks)); err != nil {
				return err
			}
		}
		serveArgs = append(serveArgs, "--backend", "temporal", "--temporal-address", taddr)
	} else if backend != "local" {
		return fmt.Errorf("unknown backend")
	}
	if _, err := l.start("ralph serve", serveArgs...); err != nil {
		return err
	}
	if err := loadrig.WaitUp(addr, 60*time.Second); err != nil {
		return fmt.Errorf("%w; see %s", err, l.log.Name())
	}
	if err := loadrig.CreateTasks(addr, *tasks); err != nil {
		return err
	}
	cpu0 := map[string]time.Duration{}
	for _, p := range l.procs {
		cpu0[p.name] = servetest.CPUTime(p.cmd.Process.Pid)
	}
	m0 := serverMetrics(metricsPort)
	began := time.Now()
	if err := loadrig.LoopTasks(addr, *tasks, *iterations+5); err != nil {
		return err
	}
	views, err := loadrig.WaitEnded(addr, 30*time.Minute, nil)
	if err != nil {
		return err
	}
	took := time.Since(began)
	iters, done := loadrig.Tally(views)
	fmt.Printf("%s backend: %d/%d tasks done, %d iterations in %s\n", backend, done, len(views), iters, took.Round(100*time.Millisecond))
	var total time.Duration
	for _, p := range l.procs {
		c := servetest.CPUTime(p.cmd.Process.Pid) - cpu0[p.name]
		total += c
		fmt.Printf("  %-20s own CPU %6.1f s  (%.2f ms per iteration)\n", p.name, c.Seconds(), float64(c.Microseconds())/1000/float64(iters))
	}
	fmt.Printf("  %-20s own CPU %6.1f s  (%.2f ms per iteration)\n", "total", total.Seconds(), float64(total.Microseconds())/1000/float64(iters))
	if metricsPort != "" {
		printServerMetrics(m0, serverMetrics(metricsPort), iters)
	}
	if done != len(views) {
		return fmt.Errorf("%d of %d tasks ended done; see %s", done, len(views), l.log.Name())
	}
	return nil
}

// printServerMetrics prints what the iterations cost the dev server by
// its counters, from m0 to m.
func printServerMetrics(m0, m devserver.Counters, iters int) {
	d := m.Since(m0)
	per := func(key string) float64 { return d[key] / float64(iters) }
	decided, queried := per("client_requests/HistoryClientRespondWorkflowTaskCompleted"), per("client_requests/MatchingClientRespondQueryTaskCompleted")
	fmt.Printf("  %-20s %6.2f per iteration: %.2f decisions, %.2f queries\n", "workflow tasks", decided+queried, decided, queried)
	fmt.Printf("  %-20s %6.2f per iteration\n", "heartbeats", per("client_requests/HistoryClientRecordActivityTaskHeartbeat"))
	// The daemon's long polls on the workflows' histories: each wakes
	// the server for a read.
	fmt.Printf("  %-20s %6.2f per iteration\n", "history reads", per("client_requests/HistoryClientGetWorkflowExecutionHistory"))
	var parts []string
	for _, op := range devserver.WriteOps {
		if n := per("persistence_requests/" + op); n >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f", op, n))
		}
	}
	fmt.Printf("  %-20s %6.2f per iteration: %s\n", "persistence writes", d.Writes()/float64(iters), strings.Join(parts, ", "))
}

// startServer starts the dev server as ralph's tests do, with its
// database in base, and returns its frontend and its metrics port once it
// answers.
func startServer(base string, l *launcher) (addr, metricsPort string, err error) {
	cli, err := devserver.Binary()
	if err != nil {
		return "", "", err
	}
	port, metrics := freePort(), freePort()
	args := append([]string{cli}, devserver.Args(port, freePort(), metrics, filepath.Join(base, "temporal.db"))...)
	if *eager {
		args = append(args, devserver.EagerFlags()...)
	}
	if *wal {
		args = append(args, devserver.SQLiteFlags()...)
	}
	if _, err := l.start("temporal dev server", args...); err != nil {
		return "", "", err
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return addr, strconv.Itoa(metrics), waitTCP(addr)
}

// launcher starts the processes of one backend's run, with their output
// in one log, and ends them when the run is over.
type launcher struct {
	env   []string
	log   *os.File
	procs []proc
}

func newLauncher(base string, env []string) (*launcher, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(base, "log"))
	if err != nil {
		return nil, err
	}
	return &launcher{env: env, log: f}, nil
}

func (l *launcher) start(name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = l.env, l.log, l.log
	if strings.HasPrefix(name, "temporal") {
		cmd.Env = append(slices.Clip(l.env), strings.Fields(*serverEnv)...)
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	l.procs = append(l.procs, proc{name, cmd})
	return cmd, nil
}

func (l *launcher) stop() {
	for _, p := range l.procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Wait()
	}
	l.log.Close()
}

// serverMetrics is the dev server's counters (devserver.Counters), none
// without a server; -dump-metrics keeps the last page read.
func serverMetrics(port string) devserver.Counters {
	if port == "" {
		return devserver.Counters{}
	}
	var raw io.Writer
	if *dump != "" {
		f, err := os.Create(*dump)
		if err == nil {
			defer f.Close()
			raw = f
		}
	}
	c, err := devserver.ReadCounters("127.0.0.1:"+port, raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporalload: the dev server's metrics:", err)
	}
	return c
}

func freeAddr() string {
	addr, err := servetest.FreeAddr()
	if err != nil {
		panic(err)
	}
	return addr
}

func freePort() int {
	return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(freeAddr())).Port
}

func waitTCP(addr string) error {
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("nothing listens on %s", addr)
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return max(strings.Count(string(b), "processor\t:"), 1)
}
