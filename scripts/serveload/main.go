// Command serveload puts `ralph serve` under the load the README quotes:
// many sessions, each looping a task with the scripted fake agent (1–3 s
// per call) to done, while a client polls the API. It measures, on the
// same machine in the same run, a single `ralph run` with the same agent
// as the yardstick, and prints:
//
//   - the daemon's own CPU per iteration against `ralph run`'s;
//   - its resident memory: with the sessions registered, with a waiting
//     task on each, and at its peak with every loop running;
//   - its OS threads at the peak of the load;
//   - API latency (p50, p99, max) of `GET /api/tasks` and
//     `GET /api/tasks/{session}` during the load;
//   - how long a restart takes to serve again with every task in the store.
//
// Linux only (/proc). Run from the repository root:
//
//	go run ./scripts/serveload -loops 200
//
// To compare two builds, build each (go build -o old/ralph ./cmd/ralph at
// one commit, new/ralph at another) and alternate runs with -ralph.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"ralph/internal/servetest"
	"ralph/scripts/internal/loadrig"
)

var (
	loops      = flag.Int("loops", 200, "sessions, each looping one task")
	iterations = flag.Int("iterations", 5, "agent calls per task (the last one finishes it)")
	minCall    = flag.Duration("min-call", time.Second, "shortest agent call")
	maxCall    = flag.Duration("max-call", 3*time.Second, "longest agent call")
	keep       = flag.Bool("keep", false, "keep the work directory")
	ralphBin   = flag.String("ralph", "", "measure this ralph binary instead of building one (to compare builds side by side)")
	every      = flag.Duration("poll", 100*time.Millisecond, "how often the client asks each route")
)

// unknownRoute is a request the daemon answers without any work (404): its
// latency is what the machine's load alone costs a request.
const unknownRoute = "an unknown route (404, no work)"

// trivialServer is the machine's floor: a separate Go process that answers
// every request 404, polled at the same moments. What the daemon's routes
// take beyond it is the daemon's; what it takes itself is the load's.
const trivialServer = "a trivial Go server, another process (404)"

// trivialList is the same server sending as many bytes as the daemon's
// list did at its last answer: what moving them costs under the load.
const trivialList = "the trivial server, a body the list's size"

// yardstickEnv makes this program that trivial server (it re-executes itself).
const yardstickEnv = "SERVELOAD_YARDSTICK"

func main() {
	if os.Getenv(yardstickEnv) != "" {
		serveYardstick()
		return
	}
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

type rig struct {
	work, home, ralph, fake, addr string
	env                           []string
	rnd                           *rand.Rand
}

func run() error {
	work, err := os.MkdirTemp("", "ralph-serveload-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	r := &rig{work: work, home: filepath.Join(work, "home"), rnd: rand.New(rand.NewPCG(1, 2))}
	if r.ralph, r.fake, err = loadrig.Build(filepath.Join(work, "bin")); err != nil {
		return err
	}
	if *ralphBin != "" {
		r.ralph = *ralphBin
	}
	r.env = loadrig.Env(work, r.home)

	solo, err := r.soloRun()
	if err != nil {
		return err
	}
	fmt.Printf("ralph run, %d iterations: %.2f ms own CPU per iteration\n", *iterations, solo)

	fmt.Printf("making %d sessions…\n", *loops)
	if err := loadrig.Sessions(r.home, *loops, func(name string) (string, error) { return r.project(name, false) }); err != nil {
		return err
	}

	d, err := r.startDaemon()
	if err != nil {
		return err
	}
	rssSessions := servetest.RSS(d.Process.Pid)
	if err := loadrig.CreateTasks(r.addr, *loops); err != nil {
		return err
	}
	time.Sleep(time.Second)
	rssTasks := servetest.RSS(d.Process.Pid)
	cpu0 := servetest.CPUTime(d.Process.Pid)

	yard, yardAddr, err := startYardstick()
	if err != nil {
		return err
	}
	defer yard.Process.Kill()
	lat := &latencies{}
	stopPoll := make(chan struct{})
	var pollWG sync.WaitGroup
	pollWG.Add(1)
	go func() {
		defer pollWG.Done()
		r.poll(lat, yardAddr, stopPoll)
	}()
	began := time.Now()
	if err := loadrig.LoopTasks(r.addr, *loops, *iterations+5); err != nil {
		return err
	}
	var peak int64
	var peakThreads int
	tasks, err := loadrig.WaitEnded(r.addr, 20*time.Minute, func() {
		peak = max(peak, servetest.RSS(d.Process.Pid))
		peakThreads = max(peakThreads, threads(d.Process.Pid))
	})
	if err != nil {
		return err
	}
	took := time.Since(began)
	cpu := servetest.CPUTime(d.Process.Pid) - cpu0
	close(stopPoll)
	pollWG.Wait()
	iters, done := loadrig.Tally(tasks)
	perIter := float64(cpu.Microseconds()) / 1000 / float64(iters)
	fmt.Printf("ralph serve, %d loops: %d/%d tasks done, %d iterations in %s\n", *loops, done, len(tasks), iters, took.Round(time.Second))
	fmt.Printf("  own CPU %.2f ms per iteration (%.2f× ralph run's)\n", perIter, perIter/solo)
	fmt.Printf("  resident memory: %.1f MB with %d sessions, %.1f MB with a waiting task on each, %.1f MB at the peak of the load\n",
		mb(rssSessions), *loops, mb(rssTasks), mb(peak))
	fmt.Printf("  per loop: %.0f KB for a waiting task, %.0f KB for a running loop\n",
		float64(rssTasks-rssSessions)/1024/float64(*loops), float64(peak-rssSessions)/1024/float64(*loops))
	fmt.Printf("  OS threads at the peak: %d\n", peakThreads)
	for _, name := range []string{"GET /api/tasks", "GET /api/tasks/{session}", unknownRoute, trivialServer, trivialList} {
		p50, p99, worst, n := lat.summary(name)
		fmt.Printf("  %s during the load: p50 %s, p99 %s, max %s (%d requests, answers up to %d KB)\n", name, p50, p99, worst, n, (lat.biggest[name]+1023)/1024)
	}

	// Restart with every task in the store.
	d.Process.Signal(syscall.SIGKILL)
	d.Wait()
	start := time.Now()
	d, err = r.startDaemon()
	if err != nil {
		return err
	}
	for {
		if _, err := loadrig.Call(r.addr, "GET", "/api/tasks", ""); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("  restart after kill -9 with %d tasks: serving again in %s\n", len(tasks), time.Since(start).Round(time.Millisecond))
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	if done != len(tasks) {
		return fmt.Errorf("%d of %d tasks ended done", done, len(tasks))
	}
	return nil
}

// project makes a trusted git repository whose agent plays a fresh task.
func (r *rig) project(name string, plan bool) (string, error) {
	return loadrig.Project(r.work, name, r.ralph, r.fake, r.env, loadrig.AgentScript(r.rnd, *iterations, *minCall, *maxCall, plan), plan)
}

// soloRun is the yardstick: `ralph run` on one project with the same agent,
// its own CPU (not its children's) per iteration.
func (r *rig) soloRun() (float64, error) {
	dir, err := r.project("solo", true)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(r.ralph, "run", "-C", dir)
	cmd.Env = r.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var last time.Duration
	for {
		select {
		case err := <-exited:
			if err != nil {
				return 0, fmt.Errorf("ralph run: %v\n%s", err, out.String())
			}
			return float64(last.Microseconds()) / 1000 / float64(*iterations), nil
		case <-time.After(20 * time.Millisecond):
			if c := servetest.CPUTime(cmd.Process.Pid); c > 0 {
				last = c
			}
		}
	}
}

func (r *rig) startDaemon() (*exec.Cmd, error) {
	if r.addr == "" {
		var err error
		if r.addr, err = servetest.FreeAddr(); err != nil {
			return nil, err
		}
	}
	log, err := os.OpenFile(filepath.Join(r.work, "serve.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	d := exec.Command(r.ralph, "serve", "--home", r.home, "--listen", r.addr, "--max-parallel", strconv.Itoa(*loops))
	d.Env, d.Stdout, d.Stderr = r.env, log, log
	if err := d.Start(); err != nil {
		return nil, err
	}
	if err := loadrig.WaitUp(r.addr, 30*time.Second); err != nil {
		return nil, fmt.Errorf("%w; see %s", err, log.Name())
	}
	return d, nil
}

// poll asks what a dashboard and a person with `ralph task status` would:
// the whole list and one session, ten times a second each.
func (r *rig) poll(lat *latencies, yardAddr string, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(*every):
		}
		for _, p := range []struct{ name, addr, path string }{
			{"GET /api/tasks", r.addr, "/api/tasks"},
			{"GET /api/tasks/{session}", r.addr, "/api/tasks/" + loadrig.Session(i%*loops)},
			{unknownRoute, r.addr, "/api/none"},
			{trivialServer, yardAddr, "/api/none"},
			{trivialList, yardAddr, "/big?n=" + strconv.Itoa(lat.last("GET /api/tasks"))},
		} {
			t0 := time.Now()
			b, err := loadrig.Call(p.addr, "GET", p.path, "")
			if err == nil || p.name == unknownRoute || p.name == trivialServer || p.name == trivialList {
				lat.add(p.name, time.Since(t0))
			}
			lat.size(p.name, len(b))
		}
	}
}

// startYardstick starts the trivial server and returns its address.
func startYardstick() (*exec.Cmd, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), yardstickEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // it dies with this program
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, "", fmt.Errorf("the trivial server: %v", err)
	}
	return cmd, strings.TrimSpace(addr), nil
}

func serveYardstick() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveload yardstick:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.Repeat([]byte{' '}, n))
	})
	mux.Handle("/", http.NotFoundHandler())
	http.Serve(ln, mux)
}

type latencies struct {
	mu      sync.Mutex
	by      map[string][]time.Duration
	biggest map[string]int // the largest answer's bytes
	lastLen map[string]int
}

func (l *latencies) last(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastLen[name]
}

func (l *latencies) size(name string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.biggest == nil {
		l.biggest = map[string]int{}
	}
	l.biggest[name] = max(l.biggest[name], n)
	if l.lastLen == nil {
		l.lastLen = map[string]int{}
	}
	l.lastLen[name] = n
}

func (l *latencies) add(name string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string][]time.Duration{}
	}
	l.by[name] = append(l.by[name], d)
}

func (l *latencies) summary(name string) (p50, p99, worst time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ds := slices.Clone(l.by[name])
	if len(ds) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration {
		return ds[min(len(ds)-1, int(q*float64(len(ds))))].Round(100 * time.Microsecond)
	}
	return at(0.5), at(0.99), ds[len(ds)-1].Round(100 * time.Microsecond), len(ds)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// threads is how many OS threads process pid has (0: unknown).
func threads(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("Threads:")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	return 0
}
