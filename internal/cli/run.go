package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/agent"
	"ralph/internal/agent/claude"
	"ralph/internal/breaker"
	"ralph/internal/config"
	"ralph/internal/control"
	"ralph/internal/loop"
	"ralph/internal/monitor"
	"ralph/internal/plan"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
	"ralph/internal/store"
)

const runLong = `Runs the agent on the project in the current directory (or --dir), one fresh
call per iteration, and after every call decides whether to go on, wait or stop.
The project needs .ralph/PROMPT.md, .ralph/fix_plan.md and .ralph/AGENT.md.

Configuration: flags > environment (RALPH_<KEY> or the bash tool's names) >
.ralphrc > defaults. .ralphrc is parsed, never executed.

Exit codes: 0 done (project_complete, plan_complete, completion_signals,
test_saturation, safety_threshold), 1 configuration or start-up error,
2 circuit breaker open, 3 permission denied, 4 usage limit (--on-usage-limit
exit), 5 budget reached (max_loops, max_runtime, max_cost), 6 needs
clarification, 7 integrity failure, 130 interrupted.`

func newRunCmd(ios IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Loop the agent over the project until the work is done (ralph's main job)",
		Long:  runLong,
		Args:  cobra.NoArgs,
	}
	rf := addRunFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runRun(cmd.Context(), ios, rf) }
	return cmd
}

// loadConfig resolves the configuration of the project in dir.
func loadConfig(dir string, flags config.Layer, warn io.Writer) (config.Config, error) {
	rc, warns, err := config.ReadRalphrc(filepath.Join(dir, ".ralphrc"), os.LookupEnv)
	if err != nil {
		return config.Config{}, err
	}
	cfg, more, err := config.Resolve(config.Defaults(), rc, config.FromEnv(os.Getenv), flags)
	for _, w := range append(warns, more...) {
		fmt.Fprintln(warn, "ralph: warning:", w)
	}
	return cfg, err
}

// openProject opens the project's state directory, explaining the old flat
// layout instead of failing obscurely.
func openProject(dir string, cfg config.Config) (*store.Store, error) {
	st, err := store.OpenWith(dir, store.Options{RalphDir: cfg.RalphDir, PromptFile: cfg.PromptFile})
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(st.RalphDir()); errors.Is(err, os.ErrNotExist) {
		for _, old := range []string{"PROMPT.md", "@fix_plan.md", "fix_plan.md", "@AGENT.md"} {
			if _, err := os.Stat(filepath.Join(dir, old)); err == nil {
				return nil, fmt.Errorf("%s uses the old flat layout (%s at the top level); ralph keeps its files in .ralph/: run `ralph migrate` there (it moves PROMPT.md, @fix_plan.md, @AGENT.md and specs/ into .ralph/, with a backup)", dir, old)
			}
		}
		return nil, fmt.Errorf("%s is not a ralph project: %s does not exist (run `ralph enable` there, or `ralph setup NAME` for a new project)", dir, st.RalphDir())
	}
	return st, nil
}

func runRun(ctx context.Context, ios IO, rf *runFlags) error {
	dir, err := filepath.Abs(rf.Dir)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(dir, rf.layer(), ios.Err)
	if err != nil {
		return err
	}
	st, err := openProject(dir, cfg)
	if err != nil {
		return err
	}
	switch {
	case rf.Status:
		return printStatus(ios, st, rf.JSON)
	case rf.CircuitStatus:
		return circuitStatus(ios, st, cfg, rf.JSON)
	case rf.ResetCircuit:
		return circuitReset(ios, st, "reset by hand (--reset-circuit)")
	case rf.ResetSession:
		return sessionReset(ios, st, "reset by hand (--reset-session)")
	case rf.Rollback:
		return rollback(ctx, ios, dir)
	}
	if err := requireTrust(dir, cfg); err != nil {
		return err
	}
	if rf.Tmux {
		return runInTmux(ios, dir, os.Args[1:])
	}
	main, err := agentSpec(cfg, cfg.AgentProvider)
	if err != nil {
		return err
	}
	ad := main.Adapter
	fallbacks, err := fallbackSpecs(cfg)
	if err != nil {
		return err
	}
	human := ios.Out
	if rf.JSON {
		human = ios.Err
	}
	logw, release, err := startRun(st)
	if err != nil {
		return err
	}
	defer release()

	set := settingsFrom(cfg)
	set.AgentName = ad.Name()
	if cfg.Live {
		live, flush := safeWriter(human)
		defer flush()
		set.OnLive = agent.RenderLive(live)
	}
	if cfg.DryRun {
		return dryRun(ios, st, ad, set, fallbacks)
	}
	obs := &observers{human: human, log: logw, verbose: cfg.Verbose, tty: isTerminal(human)}
	if rf.JSON {
		obs.json = json.NewEncoder(jsonLines(ios.Out))
	}
	deps := loop.Deps{Agent: ad, Store: st, Sessions: newSessions(st, cfg.SessionExpiry), Emit: obs.emit,
		Control: control.Open(st.RalphDir()), Fallbacks: fallbacks}
	monitorOn := rf.Monitor && !rf.JSON && isTerminal(ios.Out)
	if rf.Monitor && !monitorOn {
		fmt.Fprintln(ios.Err, "ralph: warning: --monitor needs a terminal on stdout (and no --json); showing plain output")
	}
	var res loop.Result
	if monitorOn {
		res, err = runWithMonitor(ctx, ios, monitorOptions(st, set, cfg.AgentProvider), obs, 0, func(emit func(loop.Event), feed *monitor.Feed) *loop.Engine {
			// The dashboard shows the agent's work as it streams.
			set.Live, set.OnLive = true, feed.Live
			deps.Emit = emit
			return loop.New(set, deps)
		})
	} else {
		res, err = loop.New(set, deps).Run(ctx)
	}
	if err != nil {
		return err
	}
	if cfg.Notify {
		notify(fmt.Sprintf("ralph stopped: %s", res.Reason), res.Message)
	}
	if res.ExitCode != 0 {
		return &ExitError{Code: res.ExitCode}
	}
	return nil
}

// startRun takes the project's run lock and opens ralph.log: what every
// command that runs the loop does first. release undoes both.
func startRun(st *store.Store) (log io.Writer, release func(), err error) {
	lock, err := store.AcquireLock(st.LockFile())
	if err != nil {
		return nil, nil, err
	}
	if err := st.EnsureDirs(); err != nil {
		lock.Release()
		return nil, nil, err
	}
	logw, err := store.NewRotatingWriter(st.LogFile(), 10<<20, 4)
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	unwatch := watchAgentGroups(st, logw)
	return logw, func() { unwatch(); logw.Close(); lock.Release() }, nil
}

// agentEnv hands secrets found in .ralphrc to the agent, unless ralph's own
// environment already sets them.
func agentEnv(cfg config.Config) []string {
	var env []string
	for k, v := range cfg.Secrets {
		if _, set := os.LookupEnv(k); !set {
			env = append(env, k+"="+v.Reveal())
		}
	}
	return env
}

func settingsFrom(cfg config.Config) loop.Settings {
	var tools []string
	if cfg.AgentProvider == "claude" {
		tools = cfg.AllowedTools
		if len(tools) == 0 {
			tools = claude.DefaultAllowedTools()
		}
	}
	env := agentEnv(cfg)
	return loop.Settings{
		Model: cfg.AgentModel(cfg.AgentProvider), Effort: cfg.Effort, OutputFormat: cfg.OutputFormat, Live: cfg.Live,
		AllowedTools: tools, Timeout: cfg.AgentTimeout, Env: env, Continuity: cfg.SessionContinuity,
		Delay: cfg.Delay, FailureBackoff: cfg.FailureBackoff, Backup: cfg.Backup,
		Budget: stop.Budget{MaxLoops: cfg.MaxLoops, MaxRuntime: cfg.MaxRuntime, MaxCost: cfg.MaxCost},
		Plan:   plan.Options{OptionalSections: cfg.OptionalSections},
		Policy: loop.Policy{
			Breaker: breaker.Thresholds{
				NoProgress: cfg.Breaker.NoProgressThreshold, SameError: cfg.Breaker.SameErrorThreshold,
				PermissionDenial: cfg.Breaker.PermissionDenialThreshold, OutputDeclinePercent: cfg.Breaker.OutputDeclineThreshold,
				Failure: cfg.Breaker.FailureThreshold, Cooldown: cfg.Breaker.Cooldown, AutoReset: cfg.Breaker.AutoReset,
			},
			Stop:             stop.Options{MaxDoneSignals: cfg.MaxConsecutiveDoneSignals, MaxTestOnly: cfg.MaxConsecutiveTestLoops, NoClarify: cfg.NoClarify},
			Limits:           ratelimit.Limits{MaxCallsPerHour: cfg.MaxCallsPerHour, MaxTokensPerHour: int64(cfg.MaxTokensPerHour)},
			UsageLimitWait:   cfg.UsageLimitWait,
			UsageLimitMargin: cfg.UsageLimitMargin,
			ExitOnUsageLimit: cfg.OnUsageLimit == "exit",
		},
	}
}

func dryRun(ios IO, st *store.Store, ad agent.Adapter, set loop.Settings, fallbacks []loop.AgentSpec) error {
	prompt, err := os.ReadFile(st.PromptFile())
	if err != nil {
		return fmt.Errorf("read prompt: %w", err)
	}
	pl, _ := set.Plan.Load(st.FixPlanFile())
	inv := agent.Invocation{Dir: st.ProjectDir(), Prompt: string(prompt), Model: set.Model, Effort: set.Effort,
		AllowedTools: set.AllowedTools, OutputFormat: set.OutputFormat, Live: set.Live,
		AppendSystemPrompt: loop.BuildContext(loop.ContextInput{Loop: 1, PlanKnown: true, PlanOpen: pl.Counts().OpenRequired, PlanTotal: pl.Counts().Total})}
	argv, err := ad.Command(inv)
	if err != nil {
		return err
	}
	fmt.Fprintf(ios.Out, "dry run: no agent call is made\nplan:    %s\ncommand: %s\n", pl.Summary(), agent.JoinWords(argv))
	for _, f := range fallbacks {
		inv.Model, inv.Effort, inv.AllowedTools = f.Model, f.Effort, f.AllowedTools
		fargv, err := f.Adapter.Command(inv)
		if err != nil {
			return fmt.Errorf("fallback %s: %w", f.Adapter.Name(), err)
		}
		fmt.Fprintf(ios.Out, "on a usage limit, %s: %s\n", f.Adapter.Name(), agent.JoinWords(fargv))
	}
	return nil
}

// observers print, log and stream the engine's events; they never decide.
type observers struct {
	mu       sync.Mutex
	human    io.Writer
	log      io.Writer
	json     *json.Encoder
	verbose  bool
	tty      bool          // human output is a terminal: waits show a live countdown
	stopTick chan struct{} // ends the running countdown
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// countdown rewrites one terminal line with the time left until the wait
// ends, once a second, until the next event.
func (o *observers) countdown(kind string, until time.Time) {
	stop := make(chan struct{})
	o.stopTick = stop
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			left := time.Until(until).Round(time.Second)
			if left < 0 {
				left = 0
			}
			o.mu.Lock()
			if o.stopTick == stop {
				fmt.Fprintf(o.human, "\r\033[K⏳ %s: %s left (until %s)", kind, left, until.Local().Format("15:04:05"))
			}
			o.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
}

// swapHuman replaces the human output (the dashboard owns the terminal
// while it is shown) and returns the previous one.
func (o *observers) swapHuman(w io.Writer) io.Writer {
	o.mu.Lock()
	defer o.mu.Unlock()
	old := o.human
	o.human = w
	o.tty = isTerminal(w)
	return old
}

func (o *observers) emit(ev loop.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopTick != nil {
		close(o.stopTick)
		o.stopTick = nil
		fmt.Fprint(o.human, "\r\033[K")
	}
	if o.tty && ev.Type == loop.EventWait {
		defer o.countdown(ev.WaitKind, ev.Until)
	}
	line := safeText(describe(ev))
	if line != "" {
		fmt.Fprintf(o.log, "%s %s\n", ev.At.UTC().Format(time.RFC3339), line)
		if ev.Type != loop.EventIterationStart || o.verbose {
			fmt.Fprintf(o.human, "%s %s\n", ev.At.Local().Format("15:04:05"), line)
		}
	}
	if o.json != nil {
		_ = o.json.Encode(ev)
	}
}

func describe(ev loop.Event) string {
	switch ev.Type {
	case loop.EventStart:
		return "ralph: " + ev.Message
	case loop.EventIterationStart:
		s := fmt.Sprintf("loop %d: calling the agent", ev.Loop)
		if ev.Session != "" {
			s += " (resuming session " + ev.Session + ")"
		}
		return s
	case loop.EventIterationEnd:
		m := ev.Iteration
		if m == nil {
			return ""
		}
		s := fmt.Sprintf("loop %d: %s in %s, exit %d, %d files changed, %d tokens, $%.4f — %s",
			ev.Loop, strings.ToLower(m.Status), (time.Duration(m.DurationMS) * time.Millisecond).Round(time.Second),
			m.ExitCode, m.FilesChanged, m.InputTokens+m.OutputTokens+m.CacheReadTokens+m.CacheCreationTokens, m.CostUSD, m.Decision)
		switch {
		case m.Summary != "":
			s += ": " + m.Summary
		case ev.Message != "":
			// No prose to summarise (a Codex or Gemini usage limit): the
			// decision's own reason says what happened.
			s += ": " + ev.Message
		}
		return s
	case loop.EventWait:
		return fmt.Sprintf("waiting (%s) until %s: %s", ev.WaitKind, ev.Until.Local().Format("15:04:05"), ev.Message)
	case loop.EventBackup:
		return "backup: " + ev.Message
	case loop.EventWarning:
		return "warning: " + ev.Message
	case loop.EventPaused, loop.EventResumed:
		return ev.Message
	case loop.EventAgentSwitch:
		return "agent: " + ev.Message
	case loop.EventStop:
		return fmt.Sprintf("stopped after loop %d: %s (exit %d) — %s", ev.Loop, ev.Reason, ev.ExitCode, ev.Message)
	}
	return ""
}
