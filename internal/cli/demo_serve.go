package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"ralph/internal/agent"
	"ralph/internal/demo"
	"ralph/internal/fakeapi"
	"ralph/internal/fleet"
	"ralph/internal/proc"
	"ralph/internal/serve"
)

// fleetDemoAnswerAfter is how long the demo lets its question wait before
// it answers for the person watching: long enough to see it on the
// dashboard or with ralph task status.
const fleetDemoAnswerAfter = 3 * time.Second

// fleetDemoDeadline bounds the whole demo; it takes seconds.
const fleetDemoDeadline = 2 * time.Minute

// stuck is a task the demo's script never leaves waiting: stopped for a
// reason other than its question (the agent refused to start, say).
func stuck(v serve.TaskView) bool {
	return v.State == fleet.Waiting && len(v.Questions) == 0 && v.ExitReason != ""
}

// runFleetDemo is `ralph demo --serve`: a real `ralph serve` with two
// throwaway sessions, worked by the built-in agent against a scripted
// model, driven through its API as `ralph task` drives it: a task that
// asks a question and, answered, finishes, and one that finishes at once.
func runFleetDemo(ctx context.Context, o *demoOptions) error {
	ios := o.IO
	base, keep := o.Dir, o.Keep || o.Dir != ""
	if base == "" {
		var err error
		if base, err = os.MkdirTemp("", "ralph-fleet-"); err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(base)
		}
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(base); err == nil && len(entries) > 0 && o.Dir != "" {
		return fmt.Errorf("--dir %s is not empty", base)
	}
	home, agentHome := filepath.Join(base, "home"), filepath.Join(base, "agent-home")
	for _, d := range []string{home, filepath.Join(agentHome, "config"), filepath.Join(agentHome, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	sessions, err := demo.NewFleet(filepath.Join(base, "sessions"))
	if err != nil {
		return err
	}
	srv, err := fakeapi.New(demo.FleetScript())
	if err != nil {
		return err
	}
	defer srv.Close()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find ralph's own executable: %w", err)
	}
	token, err := serve.NewToken()
	if err != nil {
		return err
	}

	// The daemon and its agents get none of the user's settings or
	// credentials: demoAgentEnv blanks them, then the demo's are set.
	env := append(os.Environ(), demoAgentEnv(os.Environ(), agentHome, srv.URL)...)
	env = append(env, "RALPH_HOME="+home, "RALPH_API_TOKEN="+token,
		"RALPH_AGENT_CMD="+agent.JoinWords([]string{exe, demoAgentCmd}),
		"RALPH_CLAUDE_OUTPUT_FORMAT=stream-json", "RALPH_DELAY=0s", "RALPH_FAILURE_BACKOFF=0s",
		"RALPH_CLAUDE_TIMEOUT_MINUTES=2", "RALPH_MAX_RUNTIME=3m")
	logPath := filepath.Join(base, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "serve", "--listen", "127.0.0.1:0", "--max-parallel", "1",
		"--session", demo.FleetShop+"="+sessions[demo.FleetShop], "--session", demo.FleetDocs+"="+sessions[demo.FleetDocs])
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = env, logf, logf, proc.ChildAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start ralph serve: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Every way out ends the daemon (SIGTERM: it ends its agents); the
	// parent-death signal covers a kill of ralph itself.
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()

	addr, err := waitForAddress(ctx, serve.Home(home), exited)
	if err != nil {
		return fmt.Errorf("%w (its log: %s)", err, logPath)
	}
	c := &serve.Client{Base: addr, Token: token, Surface: fleet.SurfaceCLI, User: "demo"}
	fmt.Fprintf(ios.Out, "ralph demo --serve\n  daemon:    ralph serve on %s (RALPH_HOME %s)\n", addr, home)
	fmt.Fprintf(ios.Out, "  sessions:  %s (%s), %s (%s), one loop at a time\n", demo.FleetShop, sessions[demo.FleetShop], demo.FleetDocs, sessions[demo.FleetDocs])
	fmt.Fprintf(ios.Out, "  model:     a script, served on %s\n  agent:     ralph's built-in demo agent\n", srv.URL)
	fmt.Fprintf(ios.Out, "  dashboard: %s/?token=%s\n\n", addr, token)

	w := &fleetWatch{out: ios.Out, c: c, seen: map[string]string{}}
	started := time.Now()
	for _, s := range []struct{ session, title string }{{demo.FleetShop, demo.ShopTask}, {demo.FleetDocs, demo.DocsTask}} {
		fmt.Fprintf(ios.Out, "$ ralph task start --loop 5 %s %s\n", s.session, s.title)
		if _, err := w.do(ctx, fleet.Command{Verb: fleet.StartLoop, Session: s.session, Title: s.title, MaxLoops: 5}); err != nil {
			return err
		}
	}
	answered := false
	var asked time.Time
	// The script takes seconds; a demo that cannot finish says so rather
	// than wait for a person who is not coming.
	deadline := time.After(fleetDemoDeadline)
	for {
		shop, docs, err := w.poll(ctx)
		if err != nil {
			return err
		}
		switch {
		case len(shop.Questions) > 0 && asked.IsZero():
			asked = time.Now()
		case len(shop.Questions) > 0 && !answered && docs.State.Finished() && time.Since(asked) >= fleetDemoAnswerAfter:
			fmt.Fprintf(ios.Out, "$ ralph task answer %s %s\n", demo.FleetShop, demo.ShopAnswer)
			if _, err := w.do(ctx, fleet.Command{Verb: fleet.Answer, Session: demo.FleetShop, Text: demo.ShopAnswer}); err != nil {
				return err
			}
			answered = true
		case shop.State.Finished() && docs.State.Finished():
			printFleetDemoSummary(ios.Out, shop, docs, time.Since(started), base, keep, srv)
			if shop.State != fleet.Done || docs.State != fleet.Done {
				return &ExitError{Code: 1}
			}
			return nil
		case shop.State == fleet.Halted || docs.State == fleet.Halted:
			fmt.Fprintf(ios.Out, "\nthe demo went wrong: a task halted; the daemon's log is %s\n", logPath)
			return &ExitError{Code: 1}
		case stuck(shop) || stuck(docs):
			fmt.Fprintf(ios.Out, "\nthe demo went wrong: a task stopped without a question; the daemon's log is %s\n", logPath)
			return &ExitError{Code: 1}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			fmt.Fprintf(ios.Out, "\nthe demo went wrong: it did not finish in %s; the daemon's log is %s\n", fleetDemoDeadline, logPath)
			return &ExitError{Code: 1}
		case err := <-exited:
			return fmt.Errorf("ralph serve ended early (%v); its log: %s", err, logPath)
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// waitForAddress waits for the daemon to say where it listens.
func waitForAddress(ctx context.Context, home serve.Home, exited <-chan error) (string, error) {
	deadline := time.After(30 * time.Second)
	for {
		if a := serve.Address(home); a != "" {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case err := <-exited:
			return "", fmt.Errorf("ralph serve did not start: %v", err)
		case <-deadline:
			return "", errors.New("ralph serve did not start listening within 30s")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fleetWatch prints each task's changes as they happen, one line each.
type fleetWatch struct {
	out  io.Writer
	c    *serve.Client
	seen map[string]string // session → the last line printed
}

func (w *fleetWatch) do(ctx context.Context, cmd fleet.Command) (serve.TaskView, error) {
	raw, err := w.c.Do(ctx, cmd)
	if err != nil {
		return serve.TaskView{}, err
	}
	var v serve.TaskView
	return v, json.Unmarshal(raw, &v)
}

// poll reads both tasks and prints what changed.
func (w *fleetWatch) poll(ctx context.Context) (shop, docs serve.TaskView, err error) {
	raw, err := w.c.List(ctx)
	if err != nil {
		return shop, docs, err
	}
	var list []serve.TaskView
	if err := json.Unmarshal(raw, &list); err != nil {
		return shop, docs, err
	}
	for _, v := range list {
		line := fmt.Sprintf("%-5s %s %-8s loop %s", v.Session, v.ID, v.State, loops(v))
		switch {
		case len(v.Questions) > 0:
			line += "  asks: " + v.Questions[0]
		case v.ExitReason != "":
			line += "  (" + v.ExitReason + ")"
		}
		if w.seen[v.Session] != line {
			w.seen[v.Session] = line
			fmt.Fprintln(w.out, "  "+line)
		}
		switch v.Session {
		case demo.FleetShop:
			shop = v
		case demo.FleetDocs:
			docs = v
		}
	}
	return shop, docs, nil
}

func printFleetDemoSummary(w io.Writer, shop, docs serve.TaskView, took time.Duration, base string, kept bool, srv *fakeapi.Server) {
	fmt.Fprintf(w, "\nWhat just happened (%s)\n", took.Round(100*time.Millisecond))
	fmt.Fprintf(w, "  - one ralph serve ran two sessions, one loop at a time, each task a real loop with every rule of ralph run;\n")
	fmt.Fprintf(w, "  - %s: %d iterations; its agent asked %q, the loop waited, the answer resumed it in the same agent session: %s;\n",
		shop.Session, shop.LoopCount, demo.ShopQuestion, shop.State)
	fmt.Fprintf(w, "  - %s: %d iteration, started when the first loop waited for its answer: %s.\n", docs.Session, docs.LoopCount, docs.State)
	for _, p := range srv.Problems() {
		fmt.Fprintln(w, "  warning: the scripted model could not answer:", p)
	}
	if kept {
		fmt.Fprintf(w, "\nKept in %s: the sessions' repositories, RALPH_HOME and the daemon's log (serve.log).\n", base)
	} else {
		fmt.Fprintln(w, "\nThe sessions and the daemon's home are removed (--keep keeps them).")
	}
	fmt.Fprintln(w, "Next: ralph serve --session NAME=DIR for your own repositories; ralph task start --loop N NAME TITLE… starts work (docs/serve.md).")
}
