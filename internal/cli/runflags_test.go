package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"ralph/internal/config"
)

// The bash tool's flags keep their names and land on the right keys, with
// the flag named as the source; unset flags do not override anything.
func TestRunFlagsLayer(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	rf := addRunFlags(fs)
	err := fs.Parse([]string{"-c", "20", "-t", "5", "--no-continue", "-l", "-v", "-n", "-b", "--allowed-tools", "Write,Bash(git diff *)",
		"--session-expiry", "12", "--output-format", "stream-json", "--max-loops", "3", "--max-cost", "2.5", "--delay", "2s",
		"--on-usage-limit", "exit", "-p", "my_prompt.md", "--json"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, warns, err := config.Resolve(config.Defaults(), config.Layer{}, config.Layer{}, rf.layer())
	if err != nil || len(warns) > 0 {
		t.Fatalf("resolve: %v %v", err, warns)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"calls", cfg.MaxCallsPerHour, 20},
		{"timeout", cfg.AgentTimeout, 5 * time.Minute},
		{"continuity", cfg.SessionContinuity, false},
		{"live", cfg.Live, true},
		{"verbose", cfg.Verbose, true},
		{"notify", cfg.Notify, true},
		{"backup", cfg.Backup, true},
		{"tools", len(cfg.AllowedTools), 2},
		{"expiry", cfg.SessionExpiry, 12 * time.Hour},
		{"format", cfg.OutputFormat, "stream-json"},
		{"max loops", cfg.MaxLoops, 3},
		{"max cost", cfg.MaxCost, 2.5},
		{"delay", cfg.Delay, 2 * time.Second},
		{"usage limit", cfg.OnUsageLimit, "exit"},
		{"prompt", cfg.PromptFile, "my_prompt.md"},
		{"json", rf.JSON, true},
		{"source", cfg.Sources["MAX_CALLS_PER_HOUR"].String(), "flag --calls"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	// Nothing set: nothing overrides the lower layers.
	fs2 := pflag.NewFlagSet("run", pflag.ContinueOnError)
	if l := addRunFlags(fs2).layer(); len(l) != 0 {
		t.Errorf("empty command line gave %v", l)
	}
}

func TestBadFlagValueNamesTheFlag(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	rf := addRunFlags(fs)
	fs.Parse([]string{"--calls", "many"})
	_, _, err := config.Resolve(config.Defaults(), config.Layer{}, config.Layer{}, rf.layer())
	if err == nil || !strings.Contains(err.Error(), "--calls") {
		t.Errorf("error %v does not name --calls", err)
	}
}

// --help shows each keyed flag's type and default, and no garbled names.
func TestRunHelpShowsTypesAndDefaults(t *testing.T) {
	var out strings.Builder
	cmd := newRunCmd(IO{Out: &out, Err: &out})
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--calls int", "(default 100)", "--delay duration", "(default 5s)", "--timeout duration",
		"a bare number is minutes", "--max-cost usd", "--on-usage-limit wait|exit", "--tmux   "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "--tmux ralph") || strings.Contains(out.String(), " string ") && strings.Contains(out.String(), "--calls string") {
		t.Errorf("garbled or untyped:\n%s", out.String())
	}
}
