package cli

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ralph/internal/config"
	"ralph/internal/shellwords"
)

// The bash tool's flags keep their names, short forms and switches; flags
// backed by a configuration key reach the config layer as given, named as
// their source, and only when given.
func runFlagTest(t *testing.T, path string) {
	opts := func(o runOptions) *runOptions {
		if o.Dir == "" {
			o.Dir = "."
		}
		if o.Config == nil {
			o.Config = config.Layer{}
		}
		return &o
	}
	checkFlags(t, path, newRunCmd, []flagCase[runOptions]{
		{argv: "run", want: opts(runOptions{})},
		{argv: "run -c 20 -t 5 --no-continue -l -v -n -b -p my_prompt.md --allowed-tools 'Write,Bash(git diff *)'",
			want: opts(runOptions{Config: flagLayer(
				"MAX_CALLS_PER_HOUR", "--calls", "20", "CLAUDE_TIMEOUT_MINUTES", "--timeout", "5",
				"SESSION_CONTINUITY", "--no-continue", "false", "LIVE", "--live", "true", "VERBOSE", "--verbose", "true",
				"NOTIFY", "--notify", "true", "BACKUP", "--backup", "true", "PROMPT_FILE", "--prompt", "my_prompt.md",
				"ALLOWED_TOOLS", "--allowed-tools", "Write,Bash(git diff *)")})},
		{argv: "run --task 'Add a health endpoint'", want: opts(runOptions{Task: "Add a health endpoint"})},
		{argv: "run -lvn", want: opts(runOptions{Config: flagLayer("LIVE", "--live", "true", "VERBOSE", "--verbose", "true", "NOTIFY", "--notify", "true")})},
		{argv: "run --max-runtime 8h --delay 2s --max-cost 2.5 --on-usage-limit exit --agent codex --fallback-agent gemini " +
			"--model m --effort high --max-tokens 1000 --session-expiry 12 --output-format stream-json --agent-cmd 'npx x' " +
			"--failure-backoff 1m --auto-reset-circuit --no-clarify --dry-run --max-loops=3",
			want: opts(runOptions{Config: flagLayer(
				"MAX_RUNTIME", "--max-runtime", "8h", "DELAY", "--delay", "2s", "MAX_COST", "--max-cost", "2.5",
				"ON_USAGE_LIMIT", "--on-usage-limit", "exit", "AGENT_PROVIDER", "--agent", "codex", "FALLBACK_AGENTS", "--fallback-agent", "gemini",
				"CLAUDE_MODEL", "--model", "m", "CLAUDE_EFFORT", "--effort", "high", "MAX_TOKENS_PER_HOUR", "--max-tokens", "1000",
				"SESSION_EXPIRY_HOURS", "--session-expiry", "12", "CLAUDE_OUTPUT_FORMAT", "--output-format", "stream-json",
				"AGENT_CMD", "--agent-cmd", "npx x", "FAILURE_BACKOFF", "--failure-backoff", "1m", "CB_AUTO_RESET", "--auto-reset-circuit", "true",
				"NO_CLARIFY", "--no-clarify", "true", "DRY_RUN", "--dry-run", "true", "MAX_LOOPS", "--max-loops", "3")})},
		// The switches that act once and exit; the first of the bash tool's
		// order wins.
		{argv: "run --status --json -C proj", want: opts(runOptions{Dir: "proj", Action: actionStatus, JSON: true})},
		{argv: "run -s --rollback", want: opts(runOptions{Action: actionStatus})},
		{argv: "run --reset-circuit -s", want: opts(runOptions{Action: actionStatus})},
		{argv: "run --rollback --reset-session --circuit-status", want: opts(runOptions{Action: actionCircuitStatus})},
		{argv: "run --circuit-status", want: opts(runOptions{Action: actionCircuitStatus})},
		{argv: "run --reset-session --reset-circuit", want: opts(runOptions{Action: actionResetCircuit})},
		{argv: "run --reset-session", want: opts(runOptions{Action: actionResetSession})},
		{argv: "run --rollback --dir p", want: opts(runOptions{Dir: "p", Action: actionRollback})},
		{argv: "run --monitor --json", want: opts(runOptions{Monitor: true, JSON: true})},
		// --tmux starts the loop again in a pane, with the same flags.
		{argv: "run --tmux -C proj --max-loops 3 --live --monitor",
			want: opts(runOptions{Dir: "proj", Tmux: true, Monitor: true, Config: flagLayer("MAX_LOOPS", "--max-loops", "3", "LIVE", "--live", "true"),
				LoopFlags: []string{"--live=true", "--max-loops=3", "--monitor=true"}})},
		{argv: "run --tmux=true", want: opts(runOptions{Tmux: true})},
		{argv: "run --max-loop 3", code: 1, says: "unknown flag: --max-loop; did you mean --max-loops?"},
		{argv: "run extra", code: 1, says: "Run 'ralph --help' for usage."},
		{argv: "run --calls", code: 1, says: "flag needs an argument"},
		{argv: "run --live=maybe", code: 1, says: "invalid argument"},
		{argv: "run --status=maybe", code: 1, says: "invalid argument"},
	})
}

// The flags' text becomes settings in the configuration's units: a bare
// number of minutes or hours, or a Go duration.
func TestRunFlagsResolve(t *testing.T) {
	tests := []struct {
		argv  string
		check func(config.Config) bool
	}{
		{"-t 5", func(c config.Config) bool { return c.AgentTimeout == 5*time.Minute }},
		{"--timeout 90s", func(c config.Config) bool { return c.AgentTimeout == 90*time.Second }},
		{"--session-expiry 12", func(c config.Config) bool { return c.SessionExpiry == 12*time.Hour }},
		{"--session-expiry 90m", func(c config.Config) bool { return c.SessionExpiry == 90*time.Minute }},
		{"--delay 2s --failure-backoff 1m", func(c config.Config) bool { return c.Delay == 2*time.Second && c.FailureBackoff == time.Minute }},
		{"--max-runtime 8h --max-cost 2.5 --max-loops 3", func(c config.Config) bool {
			return c.MaxRuntime == 8*time.Hour && c.MaxCost == 2.5 && c.MaxLoops == 3
		}},
		{"-c 20 --max-tokens 1000", func(c config.Config) bool { return c.MaxCallsPerHour == 20 && c.MaxTokensPerHour == 1000 }},
		{"--no-continue -l -v -n -b", func(c config.Config) bool {
			return !c.SessionContinuity && c.Live && c.Verbose && c.Notify && c.Backup
		}},
		{"--allowed-tools 'Write,Bash(git diff *)' --output-format stream-json --on-usage-limit exit -p my_prompt.md", func(c config.Config) bool {
			return len(c.AllowedTools) == 2 && c.OutputFormat == "stream-json" && c.OnUsageLimit == "exit" && c.PromptFile == "my_prompt.md"
		}},
		{"-c 20", func(c config.Config) bool { return c.Sources["MAX_CALLS_PER_HOUR"].String() == "flag --calls" }},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			cfg, err := resolveRunFlags(t, tt.argv)
			if err != nil || !tt.check(cfg) {
				t.Errorf("resolved %+v, %v", cfg, err)
			}
		})
	}
	if _, err := resolveRunFlags(t, "--calls many"); err == nil || !strings.Contains(err.Error(), "--calls") {
		t.Errorf("error %v does not name --calls", err)
	}
}

func resolveRunFlags(t *testing.T, argv string) (config.Config, error) {
	t.Helper()
	args, err := shellwords.Split(argv)
	if err != nil {
		t.Fatal(err)
	}
	var got *runOptions
	cmd := newRunCmd(IO{}, func(_ context.Context, o *runOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	cfg, warns, err := config.Resolve(config.Defaults(), config.Layer{}, config.Layer{}, got.Config)
	if len(warns) > 0 {
		t.Errorf("warnings %v", warns)
	}
	return cfg, err
}

// A bare `ralph` is `ralph run`, as the bash tool was called: the same
// flags, parsed the same way (and ralph's own --version).
func TestBareRalphIsRun(t *testing.T) {
	flagNames := func(fs *pflag.FlagSet) []string {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Name != "version" {
				names = append(names, f.Name+"/"+f.Shorthand)
			}
		})
		return names
	}
	root := NewRoot(IO{})
	run, _, _ := root.Find([]string{"run"})
	if got, want := flagNames(root.LocalNonPersistentFlags()), flagNames(run.LocalNonPersistentFlags()); !slices.Equal(got, want) {
		t.Errorf("ralph has flags %v, ralph run %v", got, want)
	}

	var got *runOptions
	bare := &cobra.Command{Use: "ralph"}
	bindRun(bare, IO{}, func(_ context.Context, o *runOptions) error { got = o; return nil })
	bare.SetArgs([]string{"-l", "-c", "5", "--status"})
	if err := bare.Execute(); err != nil {
		t.Fatal(err)
	}
	want := &runOptions{Dir: ".", Action: actionStatus, Config: flagLayer("LIVE", "--live", "true", "MAX_CALLS_PER_HOUR", "--calls", "5")}
	if g := flagsOnly(got); !reflect.DeepEqual(g, want) {
		t.Errorf("options %+v, want %+v", g, want)
	}

	for argv, says := range map[string]string{
		"--max-loop 3": "did you mean --max-loops?",
		"--bogus":      "Run 'ralph --help' for usage.",
		"moniter":      `did you mean "monitor"?`,
	} {
		var stderr bytes.Buffer
		if code := Main(strings.Fields(argv), strings.NewReader(""), &stderr, &stderr); code != 1 || !strings.Contains(stderr.String(), says) {
			t.Errorf("ralph %s: exit %d, %q; want 1 saying %q", argv, code, stderr.String(), says)
		}
	}
}

// --help shows each keyed flag's type and default, and no garbled names.
func TestRunHelpShowsTypesAndDefaults(t *testing.T) {
	var out strings.Builder
	cmd := newRunCmd(IO{Out: &out, Err: &out}, nil)
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--calls int", "(default 100)", "--delay duration", "(default 5s)", "--timeout duration",
		"a bare number is minutes", "--max-cost usd", "--on-usage-limit wait|exit", "--tmux   ", "-s, --status"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "--tmux ralph") || strings.Contains(out.String(), " string ") && strings.Contains(out.String(), "--calls string") {
		t.Errorf("garbled or untyped:\n%s", out.String())
	}
}
