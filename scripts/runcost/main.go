// Command runcost measures what `ralph run` costs around agent calls, as
// whole processes: each run is a fresh git repository looped by the given
// builds of ralph (and, if asked, by the bash tool ralph replaces) with the
// scripted fake agent answering at once, and the runs of one round are
// taken in turn, their order rotating from round to round, so that the
// figures are ratios measured side by side on the same machine at the same
// moments. It prints, per build, the medians over the rounds of:
//
//   - own: ralph's own CPU per call (user and system of the ralph process,
//     its children not counted), read from /proc of the exited process
//     before it is reaped;
//   - loop: the loop's overhead per call, the whole process tree (ralph, its
//     git processes, the agent) less the agent's own CPU, which is measured
//     in the same round by running the fake agent alone as often;
//
// and the median of each round's ratio of every build to the first one.
// With -bash, the bash tool's loop overhead per call is measured the same
// way (its pauses between calls cut short by a `sleep` that returns at
// once) and set against each build's.
//
// Linux only (/proc, wait4). Run from the repository root, for example:
//
//	go build -o /tmp/old/ralph ./cmd/ralph   # at the commit to compare with
//	go run ./scripts/runcost -ralph old=/tmp/old/ralph,new= -rounds 7
//
// (a build given without a path is built from the working tree).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

var (
	builds    = flag.String("ralph", "new=", "builds to compare, name=path,…; an empty path builds the working tree; the first is the reference")
	calls     = flag.Int("calls", 60, "agent calls per run of ralph")
	rounds    = flag.Int("rounds", 7, "rounds; each runs every build once")
	bashTool  = flag.String("bash", "", "the bash tool's ralph_loop.sh (its lib/ beside it), to compare with")
	bashCalls = flag.Int("bash-calls", 6, "agent calls per run of the bash tool (it is slow)")
	keep      = flag.Bool("keep", false, "keep the work directory")
	newFile   = flag.Bool("new-file", false, "every call also makes a new file (made-N.txt), so that git is asked after each")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "runcost:", err)
		os.Exit(1)
	}
}

type build struct{ name, path string }

// sample is one run's figures per agent call.
type sample struct{ own, loop time.Duration }

type rig struct {
	work, fake string
	env        []string
	seq        int
}

func newRig(work string) (*rig, error) {
	r := &rig{work: work, env: servetest.Env(work, filepath.Join(work, "home"))}
	var err error
	r.fake, err = script.Build(work)
	return r, err
}

func run() error {
	work, err := os.MkdirTemp("", "runcost-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	r, err := newRig(work)
	if err != nil {
		return err
	}
	var bs []build
	for _, spec := range strings.Split(*builds, ",") {
		name, path, _ := strings.Cut(spec, "=")
		if path == "" {
			path = filepath.Join(work, "ralph-"+name)
			if err := servetest.BuildRalph(path, false); err != nil {
				return err
			}
		}
		bs = append(bs, build{name, path})
	}
	names := make([]string, 0, len(bs)+1)
	for _, b := range bs {
		names = append(names, b.name)
	}
	if *bashTool != "" {
		names = append(names, "bash")
	}
	got := map[string][]sample{}
	for round := range *rounds {
		agentCPU, err := r.agentAlone(*calls)
		if err != nil {
			return err
		}
		for i := range names {
			name := names[(i+round)%len(names)]
			var s sample
			if name == "bash" {
				s, err = r.bash(*bashTool, agentCPU, *bashCalls)
			} else {
				s, err = r.ralph(bs[slices.IndexFunc(bs, func(b build) bool { return b.name == name })].path, agentCPU, *calls)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			got[name] = append(got[name], s)
			fmt.Printf("round %d %-6s own %6.2f ms  loop %7.2f ms per call  (agent alone %.2f ms)\n", round+1, name, ms(s.own), ms(s.loop), ms(agentCPU))
		}
	}
	fmt.Println()
	ref := names[0]
	for _, name := range names {
		ss := got[name]
		line := fmt.Sprintf("%-6s own %s ms, loop %s ms per call", name, spread(ss, func(s sample) time.Duration { return s.own }), spread(ss, func(s sample) time.Duration { return s.loop }))
		if name != ref {
			if name != "bash" {
				line += fmt.Sprintf("; against %s: own ×%.2f, loop ×%.2f", ref, ratio(ss, got[ref], func(s sample) time.Duration { return s.own }), ratio(ss, got[ref], func(s sample) time.Duration { return s.loop }))
			}
		}
		fmt.Println(line)
	}
	if *bashTool != "" {
		for _, b := range bs {
			fmt.Printf("the bash tool's loop overhead per call against %s's: %.0f× (median of the rounds' ratios)\n", b.name, ratio(got["bash"], got[b.name], func(s sample) time.Duration { return s.loop }))
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// spread is "median (min–max)" of one figure over the rounds.
func spread(ss []sample, f func(sample) time.Duration) string {
	v := make([]time.Duration, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	return fmt.Sprintf("%.2f (%.2f–%.2f)", ms(v[len(v)/2]), ms(v[0]), ms(v[len(v)-1]))
}

// ratio is the median over the rounds of a's figure over b's.
func ratio(a, b []sample, f func(sample) time.Duration) float64 {
	v := make([]float64, len(a))
	for i := range a {
		v[i] = float64(f(a[i])) / float64(f(b[i]))
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// status is the agent's answer: one step done and more to do, or all done.
func status(text string, exit bool) string {
	block := "\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nTASKS_COMPLETED_THIS_LOOP: 1\nFILES_MODIFIED: 1\nTESTS_STATUS: PASSING\nWORK_TYPE: IMPLEMENTATION\nEXIT_SIGNAL: false\nRECOMMENDATION: go on\n---END_RALPH_STATUS---"
	if exit {
		block = servetest.CompleteStatus
	}
	b, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "session_id": "s1", "result": text + block})
	return string(b) + "\n"
}

// project makes a fresh repository with a ralph project and the agent's
// script: every call changes a tracked file and answers at once; from call
// doneFrom on (0: never) it says the work is complete.
func (r *rig) project(doneFrom int) (dir, scriptPath string, err error) {
	r.seq++
	base := filepath.Join(r.work, strconv.Itoa(r.seq))
	dir = filepath.Join(base, "p")
	scriptPath = filepath.Join(base, "agent.json")
	it := script.Iteration{Files: map[string]string{"work.txt": "{{call}}\n"}, Stdout: status("Step done.", false)}
	if *newFile {
		it.Files["made-{{call}}.txt"] = "made\n"
	}
	s := script.Script{RepeatLast: true}
	for i := 1; doneFrom == 0 && i == 1 || doneFrom > 0 && i < doneFrom; i++ {
		s.Iterations = append(s.Iterations, it)
	}
	if doneFrom > 0 {
		s.Iterations = append(s.Iterations, script.Iteration{Files: map[string]string{"work.txt": "done\n"}, Stdout: status("All done.", true)})
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", "", err
	}
	if err := s.Write(scriptPath); err != nil {
		return "", "", err
	}
	files := map[string]string{".ralph/PROMPT.md": "Work on fix_plan.md.\n", ".ralph/fix_plan.md": "- [ ] one\n- [ ] two\n", ".ralph/AGENT.md": "No build.\n",
		".ralphrc": "MAX_CALLS_PER_HOUR=10000\n", "work.txt": "0\n"}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return "", "", err
		}
	}
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", a...)
		cmd.Dir, cmd.Env = dir, r.env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("git %v: %v\n%s", a, err, out)
		}
	}
	return dir, scriptPath, nil
}

// agentAlone is the fake agent's own CPU per call, playing the same
// iteration in a repository of its own.
func (r *rig) agentAlone(n int) (time.Duration, error) {
	dir, sp, err := r.project(0)
	if err != nil {
		return 0, err
	}
	prompt, _ := os.ReadFile(filepath.Join(dir, ".ralph", "PROMPT.md"))
	var total time.Duration
	for range n {
		cmd := exec.Command(r.fake, "-p", string(prompt), "--output-format", "json")
		cmd.Dir, cmd.Env = dir, append(r.env, script.EnvScript+"="+sp)
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("fake agent: %v\n%s", err, out)
		}
		total += cpu(cmd.ProcessState)
	}
	return total / time.Duration(n), nil
}

// cpu is a reaped process's CPU with that of the children it reaped.
func cpu(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

func (r *rig) ralph(bin string, agentCPU time.Duration, calls int) (sample, error) {
	dir, sp, err := r.project(0)
	if err != nil {
		return sample{}, err
	}
	cmd := exec.Command(bin, "run", "-C", dir, "--agent-cmd", r.fake, "--max-loops", strconv.Itoa(calls))
	cmd.Env = append(r.env, script.EnvScript+"="+sp)
	own, total, out, err := measure(cmd)
	if err != nil {
		return sample{}, err
	}
	if !strings.Contains(out, "max_loops") {
		return sample{}, fmt.Errorf("ralph run did not stop at --max-loops:\n%s", out)
	}
	n, err := agentCalls(sp)
	if err != nil || n != calls {
		return sample{}, fmt.Errorf("%d agent calls, want %d (%v)", n, calls, err)
	}
	return per(own, total, agentCPU, n), nil
}

// bash runs the bash tool (its ralph_loop.sh at tool) until it stops by
// itself: the agent says it is done from call n on, and the tool ends
// after a second such answer.
func (r *rig) bash(tool string, agentCPU time.Duration, n int) (sample, error) {
	// Its two version checks at the start play calls of the script too.
	dir, sp, err := r.project(n + 2)
	if err != nil {
		return sample{}, err
	}
	shim := filepath.Join(r.work, "shim")
	if err := os.MkdirAll(shim, 0o755); err != nil {
		return sample{}, err
	}
	os.Remove(filepath.Join(shim, "sleep"))
	if err := os.Symlink("/bin/true", filepath.Join(shim, "sleep")); err != nil {
		return sample{}, err
	}
	cmd := exec.Command("bash", tool)
	cmd.Dir = dir
	cmd.Env = append(r.env, script.EnvScript+"="+sp, "CLAUDE_CODE_CMD="+r.fake, "PATH="+shim+":"+os.Getenv("PATH"))
	_, total, out, err := measure(cmd)
	if err != nil {
		return sample{}, err
	}
	if got, err := agentCalls(sp); err != nil || got < n {
		return sample{}, fmt.Errorf("%d agent calls (%v):\n%s", got, err, out)
	}
	// Each call the tool starts (its version checks too) is the agent's.
	all, _ := os.ReadFile(sp + ".argv.jsonl")
	return per(0, total, agentCPU, strings.Count(string(all), "\n")), nil
}

func per(own, total, agentCPU time.Duration, n int) sample {
	return sample{own: own / time.Duration(n), loop: total/time.Duration(n) - agentCPU}
}

// agentCalls counts the calls of the script that got a prompt.
func agentCalls(sp string) (int, error) {
	b, err := os.ReadFile(sp + ".argv.jsonl")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c script.Call
		if json.Unmarshal([]byte(line), &c) == nil && !slices.Contains(c.Args, "--version") {
			n++
		}
	}
	return n, nil
}

// measure runs cmd to its end and returns its own CPU (from /proc while it
// is a zombie, before it is reaped) and the whole tree's (what wait4 counts:
// its own and its reaped descendants').
func measure(cmd *exec.Cmd) (own, total time.Duration, out string, err error) {
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return 0, 0, "", err
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(30 * time.Minute)
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(pid), uintptr(unsafe.Pointer(&info)), syscall.WEXITED|0x01000000 /* WNOWAIT */, 0, 0)
		if e == 0 {
			break
		}
		if e != syscall.EINTR || time.Now().After(deadline) {
			return 0, 0, "", e
		}
	}
	own = servetest.CPUTime(pid)
	werr := cmd.Wait()
	total = cpu(cmd.ProcessState)
	if werr != nil {
		// ralph run ends with a code of its own when it stops at a limit.
		if _, ok := werr.(*exec.ExitError); !ok {
			return 0, 0, buf.String(), werr
		}
	}
	return own, total, buf.String(), nil
}
