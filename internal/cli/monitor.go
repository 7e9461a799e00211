package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/agent"
	"ralph/internal/agent/agents"
	"ralph/internal/config"
	"ralph/internal/control"
	"ralph/internal/engine"
	"ralph/internal/loop"
	"ralph/internal/monitor"
	"ralph/internal/plan"
	"ralph/internal/store"
)

type monitorOptions struct {
	IO      IO
	Project projectFlags
}

// newMonitorCmd builds `ralph monitor`; runF replaces runMonitor in flag
// tests.
func newMonitorCmd(ios IO, runF func(context.Context, *monitorOptions) error) *cobra.Command {
	opts := &monitorOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "monitor",
		Short: "Watch a loop running in another terminal (keys: p pause, s stop, r reset breaker, l log, ? help, q quit)",
		Long: `Shows the dashboard of the loop running in this project, from its state and
log files: it notices a loop that starts, stops or restarts. q leaves the view
and the loop keeps running; p and s pause and stop it after its current
iteration, as ralph pause and ralph stop do.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runMonitor)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	return cmd
}

func runMonitor(ctx context.Context, opts *monitorOptions) error {
	st, cfg, err := opts.Project.open(opts.IO)
	if err != nil {
		return err
	}
	if !isTerminal(opts.IO.Out) {
		return errors.New("ralph monitor needs a terminal; use `ralph status` or `ralph logs -f` in scripts")
	}
	err = monitor.Run(ctx, dashboardOptions(st, specFrom(cfg, st, nil), cfg.AgentProvider))
	if errors.Is(err, monitor.ErrInterrupted) {
		return nil // ctrl+c leaves the view; the loop is another process's
	}
	return err
}

// dashboardOptions are the dashboard's view of a project, shared by `ralph
// monitor` and `ralph run --monitor`.
func dashboardOptions(st *store.Store, spec loop.Spec, provider string) monitor.Options {
	ctl := control.Open(st.RalphDir())
	return monitor.Options{
		Source: monitor.Source{
			Store: st, Plan: plan.Options{OptionalSections: spec.OptionalSections},
			Breaker: spec.Policy.Breaker, Limits: spec.Policy.Limits,
			Requests: func() (bool, bool) {
				r, err := ctl.Read()
				return err == nil && r.Pause, err == nil && r.Stop
			},
		},
		Control: &monitorControl{file: ctl, st: st},
		Parser:  liveParser(st, provider),
		Title:   projectTitle(st),
	}
}

// projectTitle is PROJECT_NAME, or the directory's name when it is unset.
func projectTitle(st *store.Store) string {
	if cfg, err := loadConfig(st.ProjectDir(), config.Layer{}, io.Discard); err == nil && cfg.ProjectName != "" {
		return cfg.ProjectName
	}
	return filepath.Base(st.ProjectDir())
}

// monitorControl is what the dashboard's keys do: the same requests as
// `ralph pause|resume|stop` and `ralph circuit reset`.
type monitorControl struct {
	mu   sync.Mutex // two quick key presses must not interleave their writes
	file control.File
	st   *store.Store
}

func (c *monitorControl) Pause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.file.Pause("monitor", time.Now())
}

func (c *monitorControl) Resume() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.file.Resume(time.Now())
}

func (c *monitorControl) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.file.Stop("monitor", time.Now())
}

// ResetBreaker closes an open breaker. An open breaker has stopped the loop,
// so no engine holds the state in memory to overwrite it.
func (c *monitorControl) ResetBreaker() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return circuitReset(IO{Out: io.Discard, Err: io.Discard}, c.st, "reset in the monitor")
}

// runWithMonitor runs the engine under the dashboard in this process. q
// leaves the view and the loop goes on with plain output; ctrl+c stops both.
// When the loop ends the view stays on its exit reason until q, or for
// closeAfter when that is set (the demo goes on to its summary).
func runWithMonitor(ctx context.Context, ios IO, opts monitor.Options, obs *observers, closeAfter time.Duration,
	spec loop.Spec, deps engine.Deps) (engine.Result, error) {
	feed := opts.Feed // the gate's, when it has one
	if feed == nil {
		feed = monitor.NewFeed()
	}
	human := obs.swapHuman(io.Discard)
	// The dashboard shows the agent's work as it streams.
	spec.Live = true
	engCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		res engine.Result
		err error
	}
	done := make(chan outcome, 1)
	viewCtx, closeView := context.WithCancel(ctx)
	defer closeView()
	go func() {
		res, err := runEngine(engCtx, spec, deps, obs.emit, feed.Event)
		done <- outcome{res, err}
		if closeAfter > 0 {
			select {
			case <-time.After(closeAfter):
				closeView()
			case <-viewCtx.Done():
			}
		}
	}()
	opts.Feed = feed
	opts.Parser = nil
	merr := monitor.Run(viewCtx, opts)
	if c, ok := opts.Responder.(interface{ Close() }); ok {
		c.Close() // nobody is left to answer the agent here
	}
	obs.swapHuman(human)
	switch {
	case errors.Is(merr, monitor.ErrInterrupted):
		cancel()
	case merr != nil:
		fmt.Fprintln(ios.Err, "ralph: monitor:", merr)
	default:
		select {
		case o := <-done:
			if o.err == nil {
				// The dashboard showed the end; once it is gone the
				// terminal must still say how the run ended.
				fmt.Fprintf(human, "ralph: stopped after loop %d: %s (exit %d) — %s\n", o.res.Loops, o.res.Reason, o.res.ExitCode, o.res.Message)
			}
			return o.res, o.err
		default:
			fmt.Fprintln(human, "ralph: left the dashboard; the loop goes on here (Ctrl-C stops it, `ralph monitor` shows the view again)")
		}
	}
	o := <-done
	return o.res, o.err
}

// runInTmux starts the loop and the dashboard side by side in tmux, as the
// bash tool's --monitor did: the loop in one pane (its own plain output) and
// `ralph monitor` in the other. Inside tmux it splits the current window;
// outside, it makes a session and attaches to it.
func runInTmux(ios IO, dir string, loopFlags []string) error {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return errors.New("--tmux needs tmux on PATH; `ralph run --monitor` shows the same dashboard without it")
	}
	// Outside tmux the session is attached to this terminal: without one,
	// a detached session would go on running a loop nobody sees. Refuse
	// before anything is created.
	if os.Getenv("TMUX") == "" && (!isTerminal(ios.Out) || !isTerminal(os.Stdin)) {
		return errors.New("--tmux needs a terminal to attach to; run it from one, or use `ralph run` (plain lines) or `ralph run --json` in scripts")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The directory is absolute: outside tmux the loop's pane starts in it.
	loopCmd := append([]string{self, "run", "--dir", dir}, loopFlags...)
	monCmd := []string{self, "monitor", "-C", dir}
	tm := func(a ...string) error {
		c := exec.Command(tmux, a...)
		c.Stdin, c.Stdout, c.Stderr = os.Stdin, ios.Out, ios.Err
		return c.Run()
	}
	if os.Getenv("TMUX") != "" {
		if err := tm(append([]string{"split-window", "-h", "-d", "-c", dir}, monCmd...)...); err != nil {
			return fmt.Errorf("tmux split-window: %w", err)
		}
		c := exec.Command(loopCmd[0], loopCmd[1:]...)
		c.Stdin, c.Stdout, c.Stderr = os.Stdin, ios.Out, ios.Err
		return c.Run()
	}
	name := fmt.Sprintf("ralph-%s-%d", sanitizeSession(filepath.Base(dir)), os.Getpid())
	// The loop's pane stays open after it ends, so its last lines (the exit
	// reason) can be read before closing the session.
	shell := tmuxPaneShell(loopCmd)
	if err := tm("new-session", "-d", "-s", name, "-c", dir, "sh", "-c", shell); err != nil {
		return fmt.Errorf("tmux new-session: %w", err)
	}
	if err := tm(append([]string{"split-window", "-h", "-t", name, "-c", dir}, monCmd...)...); err != nil {
		return fmt.Errorf("tmux split-window: %w", err)
	}
	_ = tm("select-pane", "-t", name+".0")
	return tm("attach-session", "-t", name)
}

// tmuxPaneShell is the loop pane's command: the loop, then its exit code
// (kept before any other command can replace $?) and a prompt to close.
func tmuxPaneShell(loopCmd []string) string {
	return shellJoin(loopCmd) + `; code=$?; echo; echo "ralph exited with $code; press Enter to close"; read _`
}

func sanitizeSession(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == ':' || r == ' ' {
			return '-'
		}
		return r
	}, s)
}

// shellJoin quotes argv for sh -c: tmux runs a pane's command through a shell.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// liveParser reads an agent's iteration log for the attached dashboard:
// the agent status.json names (a fallback may be running), else the main one.
func liveParser(st *store.Store, provider string) monitor.LineParser {
	return func(dir string, emit func(agent.LiveEvent)) func([]byte) {
		name := provider
		if s, err := st.ReadStatus(); err == nil && s.Agent != "" {
			name = s.Agent
		}
		if p := agents.LiveParser(name, dir, emit); p != nil {
			return p
		}
		return agents.LiveParser("command", dir, emit)
	}
}
