package cli

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ralph/internal/config"
)

// runOptions are `ralph run`'s command line, parsed.
type runOptions struct {
	IO  IO
	Dir string
	// Config holds the flags backed by a configuration key that the user
	// gave, as text: the config layer parses and validates them, so
	// precedence (flags > env > .ralphrc > defaults) is decided in one place.
	Config  config.Layer
	Action  runAction // "": run the loop
	JSON    bool
	Monitor bool
	Tmux    bool
	// NoGate keeps ralph run from asking the person at the terminal: a
	// refused tool ends the run permission_denied.
	NoGate bool
	// Task, with --task, becomes the plan's first open item before the loop.
	Task string
	// LoopFlags, with --tmux, are the flags given but --tmux and --dir, as
	// --name=value: the command line of the loop in its own pane.
	LoopFlags []string
}

// runAction is what an invocation does: run the loop, or one of the bash
// tool's switches that act once and exit.
type runAction string

const (
	actionStatus        runAction = "status"
	actionCircuitStatus runAction = "circuit-status"
	actionResetCircuit  runAction = "reset-circuit"
	actionResetSession  runAction = "reset-session"
	actionRollback      runAction = "rollback"
)

// runActions are the switches (flags of the same names); when several are
// given, the first of this list wins, as in the bash tool.
var runActions = []struct {
	action      runAction
	short, help string
}{
	{actionStatus, "s", "print the loop's status and exit"},
	{actionCircuitStatus, "", "print the circuit breaker's state and exit"},
	{actionResetCircuit, "", "close the circuit breaker and exit"},
	{actionResetSession, "", "forget the agent session and exit"},
	{actionRollback, "", "restore the working tree from the newest --backup snapshot and exit"},
}

// bindRun gives cmd run's flags and action: `ralph run` has them, and so
// has a bare `ralph`, as the bash tool was called. runF replaces runRun in
// flag tests.
func bindRun(cmd *cobra.Command, ios IO, runF func(context.Context, *runOptions) error) {
	rf := addRunFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return orDefault(runF, runRun)(cmd.Context(), rf.options(ios))
	}
}

// runFlags binds run's flags to a flag set until they are parsed into
// runOptions.
type runFlags struct {
	fs       *pflag.FlagSet
	keyed    map[string]string // flag name → config key
	boolKeys map[string]bool   // flag is a bool switch
	invert   map[string]bool   // the switch sets its key to false
	actions  map[runAction]*bool

	json, monitor, tmux, noGate bool
	dir, task                   string
}

// keyedFlags: name, shorthand, config key, help. Names and short forms are
// those of the bash tool where it had one.
var keyedFlags = []struct{ name, short, key, help string }{
	{"calls", "c", "MAX_CALLS_PER_HOUR", "maximum agent calls per sliding hour"},
	{"max-tokens", "", "MAX_TOKENS_PER_HOUR", "maximum tokens per sliding hour (0: no limit)"},
	{"prompt", "p", "PROMPT_FILE", "prompt file (default .ralph/PROMPT.md)"},
	{"timeout", "t", "CLAUDE_TIMEOUT_MINUTES", "minutes before one agent call is killed"},
	{"output-format", "", "CLAUDE_OUTPUT_FORMAT", "agent output format: json or stream-json"},
	{"allowed-tools", "", "ALLOWED_TOOLS", "tools the agent may use, e.g. \"Write,Read,Bash(git diff *)\""},
	{"session-expiry", "", "SESSION_EXPIRY_HOURS", "hours after which the agent session is not resumed"},
	{"agent-cmd", "", "AGENT_CMD", "agent executable, words split without a shell (e.g. \"npx @anthropic-ai/claude-code\")"},
	{"agent", "", "AGENT_PROVIDER", "agent to run: claude, codex, gemini, opencode or command"},
	{"fallback-agent", "", "FALLBACK_AGENTS", "agents to continue with while the main one is held by a usage limit, e.g. codex,gemini"},
	{"model", "", "CLAUDE_MODEL", "model passed to the agent"},
	{"effort", "", "CLAUDE_EFFORT", "effort level passed to the agent"},
	{"max-loops", "", "MAX_LOOPS", "stop after this many iterations (0: no limit)"},
	{"max-runtime", "", "MAX_RUNTIME", "stop after running this long, e.g. 8h (0: no limit)"},
	{"max-cost", "", "MAX_COST", "stop once the agent reported this much cost in USD (0: no limit)"},
	{"delay", "", "DELAY", "pause between iterations, e.g. 5s"},
	{"failure-backoff", "", "FAILURE_BACKOFF", "pause after a failed iteration, doubling up to 10m (0: off)"},
	{"on-usage-limit", "", "ON_USAGE_LIMIT", "on a usage limit: wait for the reset, or exit (code 4)"},
	{"verify-cmd", "", "VERIFY_CMD", "the check ralph runs itself (through sh) before it accepts a completion; failing, the agent goes on (code 9 after VERIFY_MAX_FAILURES)"},
}

var boolFlags = []struct {
	name, short, key, help string
	invert                 bool
}{
	{"live", "l", "LIVE", "show the agent's work as it streams (stream-json)", false},
	{"verbose", "v", "VERBOSE", "print more about each decision", false},
	{"no-continue", "", "SESSION_CONTINUITY", "start a fresh agent session every iteration", true},
	{"notify", "n", "NOTIFY", "desktop notification when the loop stops", false},
	{"backup", "b", "BACKUP", "snapshot the working tree to refs/ralph/backups/ before each iteration", false},
	{"auto-reset-circuit", "", "CB_AUTO_RESET", "close an open circuit breaker on start", false},
	{"no-clarify", "", "NO_CLARIFY", "never stop for questions: tell the agent to choose the safest default", false},
	{"dry-run", "", "DRY_RUN", "show what would run, without calling the agent", false},
}

func addRunFlags(fs *pflag.FlagSet) *runFlags {
	rf := &runFlags{fs: fs, keyed: map[string]string{}, boolKeys: map[string]bool{}, invert: map[string]bool{}, actions: map[runAction]*bool{}}
	for _, f := range keyedFlags {
		v := &keyedValue{typ: "string"}
		help := f.help
		if k, ok := config.Lookup(f.key); ok {
			v.typ = flagType(k)
			if k.Type == "minutes" || k.Type == "hours" {
				help += " (a bare number is " + k.Type + "; 90s, 2h work too)"
			}
		}
		fl := fs.VarPF(v, f.name, f.short, help)
		if k, ok := config.Lookup(f.key); ok && k.Default != "" && k.Default != "0" && k.Default != "0s" {
			// Shown by --help as "(default X)"; the value itself stays
			// unset, so only a flag the user gave becomes a config layer.
			fl.DefValue = k.Default
		}
		rf.keyed[f.name] = f.key
	}
	for _, f := range boolFlags {
		fs.BoolP(f.name, f.short, false, f.help)
		rf.keyed[f.name] = f.key
		rf.boolKeys[f.name] = true
		rf.invert[f.name] = f.invert
	}
	for _, a := range runActions {
		rf.actions[a.action] = fs.BoolP(string(a.action), a.short, false, a.help)
	}
	fs.BoolVar(&rf.json, "json", false, "print one JSON event per line on stdout (human output goes to stderr)")
	fs.BoolVar(&rf.monitor, "monitor", false, "show the dashboard while the loop runs, in this terminal")
	fs.BoolVar(&rf.noGate, "no-gate", false, "do not ask the person at the terminal about tools outside the allow-list or the agent's questions (a refused tool ends the run)")
	fs.BoolVar(&rf.tmux, "tmux", false, "run the loop and the dashboard (ralph monitor) side by side in tmux panes")
	fs.StringVarP(&rf.dir, "dir", "C", ".", "project directory")
	fs.StringVar(&rf.task, "task", "", "start work on this task: it becomes the plan's first item (open tasks are replaced only when you confirm)")
	return rf
}

// options are the parsed flags.
func (rf *runFlags) options(ios IO) *runOptions {
	o := &runOptions{IO: ios, Dir: rf.dir, Config: rf.layer(), JSON: rf.json, Monitor: rf.monitor, Tmux: rf.tmux, NoGate: rf.noGate, Task: rf.task}
	for _, a := range runActions {
		if *rf.actions[a.action] {
			o.Action = a.action
			break
		}
	}
	rf.fs.Visit(func(f *pflag.Flag) {
		if o.Tmux && f.Name != "tmux" && f.Name != "dir" {
			o.LoopFlags = append(o.LoopFlags, "--"+f.Name+"="+f.Value.String())
		}
	})
	return o
}

// keyedValue is a flag backed by a configuration key: kept as text (the
// config layer parses and validates it, naming the flag), typed for --help.
type keyedValue struct{ v, typ string }

func (k *keyedValue) String() string     { return k.v }
func (k *keyedValue) Set(s string) error { k.v = s; return nil }
func (k *keyedValue) Type() string       { return k.typ }

// flagType is the value's kind as --help shows it.
func flagType(k config.KeyInfo) string {
	switch k.Type {
	case "float":
		return "usd"
	case "enum":
		if len(k.Values) <= 2 {
			return strings.Join(k.Values, "|")
		}
		return "name" // the help line lists them
	case "minutes", "hours", "seconds":
		return "duration"
	}
	return k.Type
}

// layer turns the flags the user set into a config layer.
func (rf *runFlags) layer() config.Layer {
	l := config.Layer{}
	rf.fs.Visit(func(f *pflag.Flag) {
		key, ok := rf.keyed[f.Name]
		if !ok {
			return
		}
		v := f.Value.String()
		if rf.boolKeys[f.Name] && rf.invert[f.Name] {
			b, _ := strconv.ParseBool(v)
			v = strconv.FormatBool(!b)
		}
		l.SetFlag(key, "--"+f.Name, v)
	})
	return l
}
