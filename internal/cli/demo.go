package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/agent"
	"ralph/internal/agent/claude"
	"ralph/internal/config"
	"ralph/internal/control"
	"ralph/internal/demo"
	"ralph/internal/engine"
	"ralph/internal/fakeapi"
	"ralph/internal/loop"
	"ralph/internal/scaffold"
	"ralph/internal/stop"
	"ralph/internal/store"
)

const demoLong = `Shows what ralph does, in well under a minute and without an account: it
creates a throwaway Go project with a plan of three tasks, starts a scripted
model server on 127.0.0.1, and runs the real loop on the project with a real
agent talking to that server — Claude Code when it is installed, otherwise a
small agent built into ralph. Each iteration is one fresh agent call that
reads the plan, edits files and checks a task off; after each one ralph
decides whether to go on, until the agent reports the project complete.

Nothing leaves the machine: the agent gets a fresh home and configuration,
and none of your credentials or settings. The project is removed at the end
unless you pass --keep or --dir.`

// demoAgentCmd is the hidden command that runs the built-in demo agent:
// ralph starts itself with it, so the agent is a real child process that
// the loop runs, times and stops like any other.
const demoAgentCmd = "__demo-agent"

// Agent choices of --agent.
const (
	demoAuto    = "auto"
	demoClaude  = "claude"
	demoBuiltin = "builtin"
)

type demoOptions struct {
	IO        IO
	Keep      bool
	Agent     string
	Dir       string
	NoMonitor bool
	// Serve shows the fleet instead: a ralph serve with two sessions.
	Serve bool
}

// newDemoCmd builds `ralph demo`; runF replaces runDemoCmd in flag tests.
func newDemoCmd(ios IO, runF func(context.Context, *demoOptions) error) *cobra.Command {
	o := &demoOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "See ralph at work: a short real loop on a throwaway project, with a scripted model",
		Long:  demoLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch o.Agent {
			case demoAuto, demoClaude, demoBuiltin:
			default:
				return usageError{fmt.Errorf("--agent %q: want auto, claude or builtin", o.Agent)}
			}
			return orDefault(runF, runDemoCmd)(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "keep the demo project afterwards, to look around in it")
	cmd.Flags().StringVar(&o.Agent, "agent", demoAuto, "agent to run: claude (Claude Code), builtin, or auto (claude when installed)")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "create the project in `DIR` (missing or empty) and keep it")
	cmd.Flags().BoolVar(&o.NoMonitor, "no-monitor", false, "print the loop's lines instead of showing the dashboard")
	cmd.Flags().BoolVar(&o.Serve, "serve", false, "show the fleet: a ralph serve with two sessions, a question answered, the dashboard's login link")
	return cmd
}

// runDemoCmd shows the demo under the dashboard on a terminal, as plain
// lines elsewhere.
func runDemoCmd(ctx context.Context, o *demoOptions) error {
	if o.Serve {
		if o.Agent == demoClaude {
			return usageError{errors.New("--serve runs ralph's built-in agent; --agent claude goes with the single-loop demo")}
		}
		return runFleetDemo(ctx, o)
	}
	view := plainDemoView
	if !o.NoMonitor && isTerminal(o.IO.Out) {
		view = monitorDemoView
	}
	return runDemo(ctx, o, view)
}

type demoAgentOptions struct {
	IO   IO
	Args []string // Claude Code's command line, as the loop passes it
}

// newDemoAgentCmd builds the hidden demo agent command; runF replaces
// runDemoAgent in flag tests.
func newDemoAgentCmd(ios IO, runF func(context.Context, *demoAgentOptions) error) *cobra.Command {
	opts := &demoAgentOptions{IO: ios}
	return &cobra.Command{
		Use:    demoAgentCmd,
		Short:  "The built-in demo agent (started by ralph demo)",
		Hidden: true,
		// The agent reads Claude Code's command line itself.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return orDefault(runF, runDemoAgent)(cmd.Context(), opts)
		},
	}
}

func runDemoAgent(ctx context.Context, opts *demoAgentOptions) error {
	ios := opts.IO
	if code := demo.RunAgent(ctx, opts.Args, os.Getenv, ios.In, ios.Out, ios.Err); code != 0 {
		return &ExitError{Code: code} // the agent has said why, as any agent would
	}
	return nil
}

// demoView runs the engine built from spec and deps and shows the run. It
// is the one place that decides where the engine's events (deps.Emit) and
// the agent's live output go; log receives ralph.log's lines.
type demoView func(ctx context.Context, ios IO, log io.Writer, spec loop.Spec, deps engine.Deps) (engine.Result, error)

// plainDemoView prints the event lines `ralph run` prints, with the
// agent's live output between them.
func plainDemoView(ctx context.Context, ios IO, log io.Writer, spec loop.Spec, deps engine.Deps) (engine.Result, error) {
	obs := &observers{human: ios.Out, log: log, tty: isTerminal(ios.Out), live: true}
	spec.Live = true
	return runEngine(ctx, spec, deps, obs.emit)
}

// monitorDemoView runs the demo under the dashboard, as `ralph run
// --monitor` does, and leaves it a few seconds after the loop stops so the
// summary follows.
func monitorDemoView(ctx context.Context, ios IO, log io.Writer, spec loop.Spec, deps engine.Deps) (engine.Result, error) {
	obs := &observers{human: ios.Out, log: log, tty: isTerminal(ios.Out), live: true}
	opts := dashboardOptions(deps.Store.(*store.Store), spec, spec.Agents[0].Name)
	opts.Title = "ralph demo"
	return runWithMonitor(ctx, ios, opts, obs, 4*time.Second, spec, deps)
}

// demoAgent is the agent the demo runs.
type demoAgent struct {
	name  string   // in the loop's lines, status.json and metrics
	title string   // in the header and the summary
	note  string   // why auto chose the built-in agent
	argv  []string // the executable and its leading arguments
}

// chooseDemoAgent picks the agent for --agent, trying the real claude
// with the environment the demo will give it.
func chooseDemoAgent(ctx context.Context, choice string, env []string) (demoAgent, error) {
	note := ""
	if choice != demoBuiltin {
		path, err := exec.LookPath("claude")
		note = "Claude Code is not installed"
		if err == nil {
			note = "`claude --version` failed"
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, path, "--version")
			cmd.Env = append(os.Environ(), env...)
			err = cmd.Run()
		}
		switch {
		case err == nil:
			return demoAgent{name: "claude", title: "Claude Code", argv: []string{path}}, nil
		case choice == demoClaude:
			return demoAgent{}, fmt.Errorf("--agent claude: Claude Code cannot be run (%v); install it, or use --agent builtin", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return demoAgent{}, fmt.Errorf("find ralph's own executable for the built-in agent: %w", err)
	}
	return demoAgent{name: "demo-agent", title: "ralph's built-in demo agent", note: note, argv: []string{exe, demoAgentCmd}}, nil
}

// demoAPIKey is the key the demo's agent sends the scripted model, which
// checks none: a value no text of the demo contains.
const demoAPIKey = "sk-ant-demo-offline-0000"

// keptEnv are the inherited variables the agent may see: none of them
// configures an agent or holds a secret.
var keptEnv = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"}

// demoAgentEnv is the agent's environment on top of ralph's. Every agent
// process inherits ralph's environment, so each inherited variable but
// keptEnv is overridden with an empty value (the last assignment wins):
// API keys, tokens, proxies and agent settings of the user must not reach
// the demo. Then the fake model and a fresh home are set.
func demoAgentEnv(parent []string, home, baseURL string) []string {
	set := []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, "config"),
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"ANTHROPIC_BASE_URL=" + baseURL,
		// ralph masks every secret of an agent's environment by value: a
		// key of a word ("demo") would blank that word in all it shows.
		"ANTHROPIC_API_KEY=" + demoAPIKey,
		// Otherwise Claude Code contacts outside hosts.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// A failed scripted reply is a bug in the demo, not worth retrying.
		"CLAUDE_CODE_MAX_RETRIES=0",
	}
	var env []string
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if k == "" || slices.Contains(keptEnv, k) || slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, k+"=") }) {
			continue
		}
		env = append(env, k+"=")
	}
	return append(env, set...)
}

// demoLayer is the demo's configuration: live stream-json output, the file
// tools only, no pauses, and budgets that end a demo gone wrong quickly.
func demoLayer() config.Layer {
	l := config.Layer{}
	for k, v := range map[string]string{
		"LIVE": "true", "CLAUDE_OUTPUT_FORMAT": "stream-json", "ALLOWED_TOOLS": strings.Join(demo.AllowedTools, ","),
		"DELAY": "0s", "FAILURE_BACKOFF": "0s", "MAX_LOOPS": "5", "MAX_RUNTIME": "3m", "CLAUDE_TIMEOUT_MINUTES": "2",
		"SESSION_CONTINUITY": "true", "ON_USAGE_LIMIT": "exit", "NOTIFY": "false", "BACKUP": "false",
	} {
		l.SetFlag(k, "ralph demo", v)
	}
	return l
}

func runDemo(ctx context.Context, o *demoOptions, view demoView) error {
	ios := o.IO
	home, err := os.MkdirTemp("", "ralph-demo-agent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	for _, d := range []string{"config", "tmp"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			return err
		}
	}
	srv, err := fakeapi.New(demo.Script())
	if err != nil {
		return err
	}
	// Closed on every way out, Ctrl-C included: nothing of the demo outlives it.
	defer srv.Close()
	env := demoAgentEnv(os.Environ(), home, srv.URL)
	ag, err := chooseDemoAgent(ctx, o.Agent, env)
	if err != nil {
		return err
	}

	dir, keep := o.Dir, o.Keep || o.Dir != ""
	if dir == "" {
		parent, err := os.MkdirTemp("", "ralph-demo-")
		if err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(parent)
		}
		dir = filepath.Join(parent, demo.ProjectName)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := demo.NewProject(dir); err != nil {
		return err
	}
	before := projectFiles(dir)

	// Only the demo's own .ralphrc and settings count: RALPH_* variables
	// of the user must not change what a newcomer sees.
	rc, warns, err := config.ReadRalphrc(filepath.Join(dir, ".ralphrc"), func(string) (string, bool) { return "", false })
	if err != nil {
		return err
	}
	cfg, more, err := config.Resolve(config.Defaults(), rc, nil, demoLayer())
	if err != nil {
		return err
	}
	for _, w := range append(warns, more...) {
		fmt.Fprintln(ios.Err, "ralph: warning:", w)
	}
	st, err := openProject(dir, cfg)
	if err != nil {
		return err
	}
	logw, release, err := startRun(st)
	if err != nil {
		return err
	}
	defer release()

	spec := specFrom(cfg, st, []loop.AgentSpec{{Name: ag.name, Model: cfg.AgentModel(cfg.AgentProvider), Effort: cfg.Effort, AllowedTools: cfg.AllowedTools}})
	spec.Env = env
	ss := newSessions(st)
	deps := engine.Deps{
		Agents: []agent.Adapter{&claude.Adapter{Base: agent.Base{Cmd: ag.argv, Runner: &agent.Runner{}, Now: time.Now}}},
		Store:  sessionStore{st, ss.warn}, Sessions: ss, Control: control.Open(st.RalphDir()),
	}
	title := ag.title
	if ag.note != "" {
		title += " (" + ag.note + ")"
	}
	fmt.Fprintf(ios.Out, "ralph demo\n  project: %s\n  model:   a script, served on %s\n  agent:   %s\n\n", dir, srv.URL, title)
	res, err := view(ctx, ios, logw, spec, deps)
	if err != nil {
		return err
	}
	for _, p := range srv.Problems() {
		fmt.Fprintln(ios.Err, "ralph: warning: the scripted model could not answer:", p)
	}
	status, _ := st.ReadStatus()
	printDemoSummary(ios.Out, demoSummary{
		agent: ag.title, result: res, totals: status.Totals, files: changedFiles(before, projectFiles(dir)),
		dir: dir, kept: keep, interrupted: ctx.Err() != nil,
	})
	return loopResult(res.Reason)
}

// projectFiles hashes the project's files, leaving out git's and the
// state ralph keeps for itself (what .gitignore lists), so that what the
// agent wrote can be told apart.
func projectFiles(dir string) map[string][32]byte {
	files := map[string][32]byte{}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel == ".git" || ralphState(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if b, err := os.ReadFile(path); err == nil {
				files[rel] = sha256.Sum256(b)
			}
		}
		return nil
	})
	return files
}

// ralphState matches rel against scaffold.GitignoreEntries.
func ralphState(rel string, isDir bool) bool {
	for _, e := range scaffold.GitignoreEntries {
		if dirEntry, ok := strings.CutSuffix(e, "/"); ok {
			if isDir && rel == dirEntry {
				return true
			}
			continue
		}
		if m, _ := filepath.Match(e, rel); m {
			return true
		}
	}
	return false
}

// changedFiles lists the files created or changed since before, sorted.
func changedFiles(before, after map[string][32]byte) []string {
	var out []string
	for p, h := range after {
		if old, ok := before[p]; !ok || old != h {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

type demoSummary struct {
	agent       string
	result      engine.Result
	totals      store.Totals
	files       []string
	dir         string
	kept        bool
	interrupted bool
}

func printDemoSummary(w io.Writer, s demoSummary) {
	var b strings.Builder
	b.WriteString("\nWhat just happened\n")
	fmt.Fprintf(&b, "  ralph made a small Go project with a plan of %d tasks (.ralph/fix_plan.md) and ran\n", len(demo.Tasks))
	fmt.Fprintf(&b, "  %s on it in a loop, against a scripted model on 127.0.0.1. Each\n", s.agent)
	b.WriteString("  iteration was one fresh agent call, resuming the last one's session; after each,\n")
	b.WriteString("  ralph read the agent's status block, checked the plan and the files, and decided\n")
	b.WriteString("  whether to go on.\n\n")
	files := "none"
	if len(s.files) > 0 {
		files = strings.Join(s.files, ", ")
	}
	tokens := s.totals.InputTokens + s.totals.OutputTokens + s.totals.CacheReadInputTokens + s.totals.CacheCreationInputTokens
	fmt.Fprintf(&b, "  iterations:     %d\n", s.result.Loops)
	fmt.Fprintf(&b, "  files written:  %s\n", files)
	fmt.Fprintf(&b, "  tokens:         %d, $%.4f as the agent priced them (nothing was paid: the model is a script)\n", tokens, s.totals.CostUSD)
	reason := string(s.result.Reason)
	if s.result.Message != "" && s.result.Message != reason {
		reason += " — " + s.result.Message
	}
	fmt.Fprintf(&b, "  stopped:        %s\n", reason)
	switch {
	case s.kept:
		fmt.Fprintf(&b, "  project:        %s\n", s.dir)
		b.WriteString("                  look at .ralph/fix_plan.md and .ralph/logs/, `ralph status` there, `go test ./...`\n")
	default:
		b.WriteString("  project:        removed (`ralph demo --keep` keeps it to look around in)\n")
	}
	if s.interrupted {
		b.WriteString("\nThe demo was interrupted before the loop finished.\n")
	} else if s.result.Reason != stop.ProjectComplete {
		b.WriteString("\nThe demo did not end as scripted; the lines above say why.\n")
	}
	b.WriteString("\nNext steps\n")
	b.WriteString("  ralph setup NAME   create a new project ready for the loop\n")
	b.WriteString("  ralph enable       make the repository you are in a ralph project\n")
	b.WriteString("  ralph run          then run the loop there, with your real agent\n")
	fmt.Fprint(w, b.String())
}
