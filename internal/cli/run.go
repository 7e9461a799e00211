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
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/agent"
	"ralph/internal/breaker"
	"ralph/internal/config"
	"ralph/internal/control"
	"ralph/internal/engine"
	"ralph/internal/events"
	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/ratelimit"
	"ralph/internal/redact"
	"ralph/internal/stop"
	"ralph/internal/store"
	"ralph/internal/tracing"
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
clarification, 7 integrity failure, 8 agent setup failure (not logged in,
a rejected key, an unknown model or flag), 130 interrupted.`

// newRunCmd builds `ralph run`; runF replaces runRun in flag tests.
func newRunCmd(ios IO, runF func(context.Context, *runOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Loop the agent over the project until the work is done (ralph's main job)",
		Long:  runLong,
		Args:  cobra.NoArgs,
	}
	bindRun(cmd, ios, runF)
	return cmd
}

// loadConfig resolves the configuration of the project in dir, for commands
// that go on with the lines they could not read: those are warnings here.
func loadConfig(dir string, flags config.Layer, warn io.Writer) (config.Config, error) {
	cfg, skipped, err := readConfig(dir, flags, warn)
	warnSkipped(warn, skipped)
	return cfg, err
}

func warnSkipped(warn io.Writer, skipped []config.Warning) {
	for _, w := range skipped {
		fmt.Fprintln(warn, "ralph: warning:", w)
	}
}

// readConfig is loadConfig that returns the .ralphrc lines that could not
// be read at all instead of printing them: the caller either refuses with
// them (unreadable) or warns (warnSkipped), so each is said once.
func readConfig(dir string, flags config.Layer, warn io.Writer) (config.Config, []config.Warning, error) {
	rc, warns, err := config.ReadRalphrc(filepath.Join(dir, ".ralphrc"), os.LookupEnv)
	if err != nil {
		return config.Config{}, nil, err
	}
	cfg, more, err := config.Resolve(config.Defaults(), rc, config.FromEnv(os.Getenv), flags)
	more = append(more, config.UnknownEnv(os.Environ())...)
	var skipped []config.Warning
	for _, w := range append(warns, more...) {
		if w.Skipped {
			skipped = append(skipped, w)
			continue
		}
		fmt.Fprintln(warn, "ralph: warning:", w)
	}
	return cfg, skipped, err
}

// unreadable refuses to act on a .ralphrc with lines that could not be read:
// `MAX_LOOPS="5` must not start an unbounded run.
func unreadable(skipped []config.Warning) error {
	if len(skipped) == 0 {
		return nil
	}
	lines := make([]string, len(skipped))
	for i, w := range skipped {
		lines[i] = w.String()
	}
	return fmt.Errorf("%s\nralph does not start with settings it could not read; fix the line(s) above", strings.Join(lines, "\n"))
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

// runRun does what the command line asks: one of the bash tool's actions
// that act once and exit, or the loop.
func runRun(ctx context.Context, opts *runOptions) error {
	ios := opts.IO
	leanRuntime()
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	cfg, skipped, err := readConfig(dir, opts.Config, ios.Err)
	if err != nil {
		return err
	}
	st, err := openProject(dir, cfg)
	if err != nil {
		return err
	}
	if opts.Action != "" {
		// These act once and do not need every setting: they say what
		// could not be read and go on.
		warnSkipped(ios.Err, skipped)
	}
	switch opts.Action {
	case actionStatus:
		return printStatus(ios, st, opts.JSON)
	case actionCircuitStatus:
		return circuitStatus(ios, st, cfg, opts.JSON)
	case actionResetCircuit:
		return circuitReset(ios, st, "reset by hand (--reset-circuit)")
	case actionResetSession:
		return sessionReset(ios, st, "reset by hand (--reset-session)")
	case actionRollback:
		return rollback(ctx, ios, dir)
	}
	// Only the loop needs settings that were all read, and trusted.
	if err := unreadable(skipped); err != nil {
		return err
	}
	if e, ok := opts.Config["PROMPT_FILE"]; ok && e.Source.Kind == config.SourceFlag {
		if err := promptFileError(dir, e.Value); err != nil {
			return err
		}
	}
	if opts.Task != "" && !opts.Tmux && !cfg.DryRun {
		if err := seedTask(ios, st, opts.Task); err != nil {
			return err
		}
	}
	if err := requireTrust(dir, cfg); err != nil {
		return err
	}
	if opts.Tmux {
		return runInTmux(ios, dir, opts.LoopFlags)
	}
	return runLoop(ctx, opts, st, cfg)
}

// runLoop runs the loop in this process, shown as plain lines, JSON lines
// or the dashboard.
func runLoop(ctx context.Context, opts *runOptions, st *store.Store, cfg config.Config) error {
	ios := opts.IO
	specs, ads, err := runAgents(cfg)
	if err != nil {
		return err
	}
	human := ios.Out
	if opts.JSON {
		human = ios.Err
	}
	logw, release, err := startRun(st)
	if err != nil {
		return err
	}
	defer release()

	spec := specFrom(cfg, st, specs)
	if cfg.DryRun {
		return dryRun(ios, st, cfg, spec, ads)
	}
	// Its calls come one after another: each empties its directories for
	// the next instead of making and removing two, and each save swaps the
	// state files with spares instead of making new ones.
	defer agent.KeepCallDirs()()
	defer st.KeepSpares()()
	tr, stopTraces, err := startTraces(ctx, "", ios.Err)
	if err != nil {
		return err
	}
	defer stopTraces()
	obs := &observers{human: human, log: logw, verbose: cfg.Verbose, tty: isTerminal(human), live: cfg.Live}
	if opts.JSON {
		obs.json = json.NewEncoder(jsonLines(ios.Out))
	}
	ss := newSessions(st)
	deps := engine.Deps{Agents: ads, Store: sessionStore{st, ss.warn}, Sessions: ss, Control: control.Open(st.RalphDir())}
	if path := os.Getenv("RALPH_TRACE"); path != "" {
		trace, closeTrace, err := traceFile(path)
		if err != nil {
			return err
		}
		defer closeTrace()
		deps.Trace = trace
	}
	monitorOn := opts.Monitor && !opts.JSON && isTerminal(ios.Out)
	if opts.Monitor && !monitorOn {
		fmt.Fprintln(ios.Err, "ralph: warning: --monitor needs a terminal on stdout (and no --json); showing plain output")
	}
	run := tr.Start(tracing.RunInfo{Project: filepath.Base(st.ProjectDir()), Agents: spec.Agents})
	defer run.End()
	traceRun(&deps, run)
	var res engine.Result
	if monitorOn {
		mopts := dashboardOptions(st, spec, cfg.AgentProvider)
		if gateWanted(monitorOn, opts.NoGate, isTerminalReader(ios.In), os.Getenv) {
			// The person at the dashboard answers the agent's calls.
			if err := withTermGate(&deps, &mopts, spec); err != nil {
				return err
			}
		}
		res, err = runWithMonitor(ctx, ios, mopts, obs, 0, spec, deps)
	} else {
		if gateWanted(!opts.JSON && isTerminal(ios.Out), opts.NoGate, isTerminalReader(ios.In), os.Getenv) {
			// A person at this terminal answers on its lines.
			if err := withLineGate(&deps, spec, ios.Out, ios.In); err != nil {
				return err
			}
		}
		res, err = runEngine(ctx, spec, deps, obs.emit)
	}
	if err != nil {
		return err
	}
	if cfg.Notify {
		notify(fmt.Sprintf("ralph stopped: %s", res.Reason), res.Message)
	}
	return loopResult(res.Reason)
}

// traceFile appends the loop's decisions to path as JSON lines
// ($RALPH_TRACE, for replaying a run through Next and Fold).
func traceFile(path string) (func(loop.Trace), func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("RALPH_TRACE: %w", err)
	}
	// A trace quotes the agent; like every file ralph writes, it is masked.
	write := func(t loop.Trace) {
		if b, err := json.Marshal(t); err == nil {
			_, _ = f.Write(append(redact.JSON(b), '\n'))
		}
	}
	return write, func() { f.Close() }, nil
}

// drainTimeout is how long a finished loop waits for its observers to show
// the last events: long enough for a slow terminal, short enough that a
// stuck stdout pipe cannot keep ralph from exiting.
const drainTimeout = 5 * time.Second

// runEngine runs one loop in this process with its events going, through
// a bus, to observers: none of them can hold the loop up.
func runEngine(ctx context.Context, spec loop.Spec, deps engine.Deps, observers ...func(loop.Event)) (engine.Result, error) {
	bus := events.New()
	for _, o := range observers {
		bus.Subscribe(o, 0)
	}
	if first := deps.Emit; first != nil {
		// An observer that must see each event as it happens (the
		// traces: the agent call's span before the call) comes first; it
		// never blocks.
		deps.Emit = func(ev loop.Event) { first(ev); bus.Publish(ev) }
	} else {
		deps.Emit = bus.Publish
	}
	res, err := engine.New(spec, deps).Run(ctx)
	bus.Close(drainTimeout)
	return res, err
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

// specFrom is the loop of the project in st as cfg configures it.
func specFrom(cfg config.Config, st *store.Store, agents []loop.AgentSpec) loop.Spec {
	spec := loop.Spec{
		Dir: st.ProjectDir(), Agents: agents, OutputFormat: cfg.OutputFormat, Live: cfg.Live,
		Timeout: cfg.AgentTimeout, ApprovalTimeout: cfg.ApprovalTimeout, Env: agentEnv(cfg), Backup: cfg.Backup,
		OptionalSections: cfg.OptionalSections, Sandboxed: cfg.Sandbox.Provider != "",
		Policy: loop.Policy{
			Breaker: breaker.Thresholds{
				NoProgress: cfg.Breaker.NoProgressThreshold, SameError: cfg.Breaker.SameErrorThreshold,
				PermissionDenial: cfg.Breaker.PermissionDenialThreshold, OutputDeclinePercent: cfg.Breaker.OutputDeclineThreshold,
				Failure: cfg.Breaker.FailureThreshold, Cooldown: cfg.Breaker.Cooldown, AutoReset: cfg.Breaker.AutoReset,
			},
			Stop:             stop.Options{MaxDoneSignals: cfg.MaxConsecutiveDoneSignals, MaxTestOnly: cfg.MaxConsecutiveTestLoops, NoClarify: cfg.NoClarify},
			Limits:           ratelimit.Limits{MaxCallsPerHour: cfg.MaxCallsPerHour, MaxTokensPerHour: int64(cfg.MaxTokensPerHour)},
			Budget:           stop.Budget{MaxLoops: cfg.MaxLoops, MaxRuntime: cfg.MaxRuntime, MaxCost: cfg.MaxCost},
			UsageLimitWait:   cfg.UsageLimitWait,
			UsageLimitMargin: cfg.UsageLimitMargin,
			ExitOnUsageLimit: cfg.OnUsageLimit == "exit",
			Delay:            cfg.Delay,
			FailureBackoff:   cfg.FailureBackoff,
			Verify:           loop.VerifyPolicy{On: cfg.VerifyCmd != "", MaxFailures: cfg.VerifyMaxFailures},
			NoContinuity:     !cfg.SessionContinuity,
			SessionExpiry:    cfg.SessionExpiry,
		},
	}
	if cfg.VerifyCmd != "" {
		spec.Verifier = verifier(cfg, spec.Dir, spec.Env)
	}
	return spec
}

// dryRun shows what a run would do: the settings that are not defaults
// and where they come from, the plan, and each agent's command with the
// prompt left out (-v shows every setting and the prompt). It fails, as the
// run would, when an agent's executable cannot be found.
func dryRun(ios IO, st *store.Store, cfg config.Config, spec loop.Spec, ads []agent.Adapter) error {
	prompt, err := store.ReadIn(st.ProjectDir(), st.PromptFile(), store.MaxPromptSize)
	if err != nil {
		return fmt.Errorf("read prompt: %w", err)
	}
	fmt.Fprintln(ios.Out, "dry run: no agent call is made")
	fmt.Fprintln(ios.Out, "settings:")
	defaults := 0
	for _, set := range cfg.Redacted() {
		if set.Source.Kind == config.SourceDefault && !cfg.Verbose {
			defaults++
			continue
		}
		fmt.Fprintf(ios.Out, "  %-28s %-20s %s\n", set.Key, set.Value, set.Source)
	}
	if defaults > 0 {
		fmt.Fprintf(ios.Out, "  … and %d more at their defaults (-v lists them)\n", defaults)
	}
	pl, _ := store.LoadPlan(st.ProjectDir(), st.FixPlanFile(), plan.Options{OptionalSections: spec.OptionalSections})
	fmt.Fprintf(ios.Out, "plan:    %s\n", pl.Summary())
	inv := agent.Invocation{Dir: st.ProjectDir(), Prompt: string(prompt), OutputFormat: spec.OutputFormat, Live: spec.Live,
		AppendSystemPrompt: loop.BuildContext(loop.ContextInput{Loop: 1, PlanKnown: true, PlanOpen: pl.Counts().OpenRequired, PlanTotal: pl.Counts().Total})}
	var missing []string
	for i, a := range spec.Agents {
		inv.Model, inv.Effort, inv.AllowedTools = a.Model, a.Effort, a.AllowedTools
		argv, err := ads[i].Command(inv)
		if err != nil {
			if i > 0 {
				return fmt.Errorf("fallback %s: %w", a.Name, err)
			}
			return err
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			missing = append(missing, fmt.Sprintf("%s: %v", a.Name, err))
		}
		shown := agent.JoinWords(argv)
		if !cfg.Verbose {
			shown = agent.JoinWords(elide(argv, string(prompt), fmt.Sprintf("<%s, %d bytes>", filepath.Base(st.PromptFile()), len(prompt))))
		}
		if i == 0 {
			fmt.Fprintf(ios.Out, "command: %s\n", shown)
			continue
		}
		fmt.Fprintf(ios.Out, "on a usage limit, %s: %s\n", a.Name, shown)
	}
	if cfg.Verbose {
		fmt.Fprintf(ios.Out, "prompt (%s):\n%s", st.PromptFile(), prompt)
	}
	if len(missing) > 0 {
		return fmt.Errorf("the agent cannot start: %s", strings.Join(missing, "; "))
	}
	return nil
}

// elide replaces the argument that is the prompt with a short note: the
// prompt is hundreds of lines nobody asked to see.
func elide(argv []string, prompt, note string) []string {
	out := slices.Clone(argv)
	for i, a := range out {
		if a == prompt && len(a) > 0 {
			out[i] = note
		}
	}
	return out
}

// runGCPercent is the collector's target for a loop: its live heap is about
// 2 MB and every iteration allocates a few hundred KB (state files, the
// analysis), so at Go's default of 100 it collected every few iterations,
// a tenth of its own CPU; four times the live heap costs a few MB.
const runGCPercent = 400

// leanRuntime sets runGCPercent unless GOGC says otherwise, and one P
// unless GOMAXPROCS does: a loop does one thing after another, and a second
// P only costs wakeups — a spinning thread woken for every goroutine made
// ready, and the runtime's monitor thread polling every 20µs for as long as
// the other P sits in a system call (an fsync, a fork). One P took a third
// of ralph's context switches and a sixth of its own CPU in a loop of quick
// calls (scripts/runcost).
func leanRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(runGCPercent)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
