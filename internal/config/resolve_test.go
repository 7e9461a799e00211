package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// layers builds the three layers of a test: rc text, an environment and
// flags given as {key, flag, value} triples.
type layers struct {
	rc    string
	env   map[string]string
	flags [][3]string
}

func (l layers) resolve(t *testing.T) (Config, []Warning, error) {
	t.Helper()
	rc, _, err := ParseRalphrc(".ralphrc", []byte(l.rc))
	if err != nil {
		t.Fatal(err)
	}
	flags := Layer{}
	for _, f := range l.flags {
		flags.SetFlag(f[0], f[1], f[2])
	}
	return Resolve(Defaults(), rc, FromEnv(func(k string) string { return l.env[k] }), flags)
}

func TestPrecedence(t *testing.T) {
	tests := []struct {
		name       string
		in         layers
		key        string
		want       string
		wantSource string
	}{
		{"default", layers{}, "MAX_CALLS_PER_HOUR", "100", "default"},
		{"rc over default", layers{rc: "\nMAX_CALLS_PER_HOUR=50"}, "MAX_CALLS_PER_HOUR", "50", ".ralphrc:2"},
		{"env over rc", layers{rc: "MAX_CALLS_PER_HOUR=50", env: map[string]string{"MAX_CALLS_PER_HOUR": "60"}},
			"MAX_CALLS_PER_HOUR", "60", "env MAX_CALLS_PER_HOUR"},
		{"RALPH_ prefix over bare name", layers{env: map[string]string{"MAX_CALLS_PER_HOUR": "60", "RALPH_MAX_CALLS_PER_HOUR": "70"}},
			"MAX_CALLS_PER_HOUR", "70", "env RALPH_MAX_CALLS_PER_HOUR"},
		{"flag over env", layers{rc: "MAX_CALLS_PER_HOUR=50", env: map[string]string{"MAX_CALLS_PER_HOUR": "60"},
			flags: [][3]string{{"MAX_CALLS_PER_HOUR", "--calls", "80"}}}, "MAX_CALLS_PER_HOUR", "80", "flag --calls"},
		{"empty env is unset", layers{rc: "MAX_CALLS_PER_HOUR=50", env: map[string]string{"MAX_CALLS_PER_HOUR": ""}},
			"MAX_CALLS_PER_HOUR", "50", ".ralphrc:1"},
		{"empty rc value is unset", layers{rc: `SANDBOX_E2B_MAX_COST=""`}, "SANDBOX_E2B_MAX_COST", "0", "default"},
		{"empty OPTIONAL_SECTIONS means none", layers{rc: `OPTIONAL_SECTIONS=""`}, "OPTIONAL_SECTIONS", "", ".ralphrc:1"},
		{"rc alias", layers{rc: "CLAUDE_USE_CONTINUE=false"}, "SESSION_CONTINUITY", "false", ".ralphrc:1"},
		{"env alias", layers{env: map[string]string{"CLAUDE_USE_CONTINUE": "false"}}, "SESSION_CONTINUITY", "false", "env CLAUDE_USE_CONTINUE"},
		{"env alias of new key", layers{env: map[string]string{"RALPH_VERBOSE": "true"}}, "VERBOSE", "true", "env RALPH_VERBOSE"},
		{"upstream env name", layers{env: map[string]string{"ENABLE_NOTIFICATIONS": "true"}}, "NOTIFY", "true", "env ENABLE_NOTIFICATIONS"},
		{"new keys ignore bare env", layers{env: map[string]string{"DELAY": "9s"}}, "DELAY", "5s", "default"},
		{"new keys read RALPH_ env", layers{env: map[string]string{"RALPH_DELAY": "9s"}}, "DELAY", "9s", "env RALPH_DELAY"},
		{"flag by alias", layers{flags: [][3]string{{"CLAUDE_CODE_CMD", "--agent-cmd", "my-claude --x"}}},
			"AGENT_CMD", "my-claude --x", "flag --agent-cmd"},
		{"inverted flag", layers{rc: "SESSION_CONTINUITY=true", flags: [][3]string{{"SESSION_CONTINUITY", "--no-continue", "false"}}},
			"SESSION_CONTINUITY", "false", "flag --no-continue"},
		{"minutes", layers{rc: "CLAUDE_TIMEOUT_MINUTES=30"}, "CLAUDE_TIMEOUT_MINUTES", "30", ".ralphrc:1"},
		{"bare number duration is seconds", layers{flags: [][3]string{{"DELAY", "--delay", "12"}}}, "DELAY", "12s", "flag --delay"},
		{"provider picks its command", layers{rc: "AGENT_PROVIDER=codex"}, "AGENT_CMD", "codex", "default"},
		{"explicit command beats provider", layers{rc: "AGENT_PROVIDER=codex\nAGENT_CMD='npx codex'"}, "AGENT_CMD", "npx codex", ".ralphrc:2"},
		{"stock command from rc", layers{rc: `CLAUDE_CODE_CMD="npx @anthropic-ai/claude-code"`}, "AGENT_CMD",
			"npx @anthropic-ai/claude-code", ".ralphrc:1"},
		{"restricted key ignored from rc", layers{rc: "RALPH_DIR=/tmp/elsewhere"}, "RALPH_DIR", ".ralph", "default"},
		{"restricted key stock value from rc", layers{rc: "RALPH_DIR=.ralph"}, "RALPH_DIR", ".ralph", ".ralphrc:1"},
		{"restricted key from env", layers{env: map[string]string{"RALPH_DIR": "/tmp/elsewhere"}}, "RALPH_DIR", "/tmp/elsewhere", "env RALPH_DIR"},
		{"restricted key from flag", layers{rc: "RALPH_DIR=/tmp/elsewhere",
			flags: [][3]string{{"RALPH_DIR", "--ralph-dir", "state"}}}, "RALPH_DIR", "state", "flag --ralph-dir"},
		{"unsupported key at its default", layers{rc: "CREATE_PR=false\nSANDBOX_DOCKER_IMAGE=ralph-sandbox:latest"}, "CREATE_PR", "false", ".ralphrc:1"},
		{"enum is case-insensitive", layers{rc: "CLAUDE_OUTPUT_FORMAT=JSON"}, "CLAUDE_OUTPUT_FORMAT", "json", ".ralphrc:1"},
		{"bool spellings", layers{rc: "CB_AUTO_RESET=yes"}, "CB_AUTO_RESET", "true", ".ralphrc:1"},
		{"money", layers{flags: [][3]string{{"MAX_COST", "--max-cost", "$12.50"}}}, "MAX_COST", "12.5", "flag --max-cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := tt.in.resolve(t)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			got, ok := cfg.Value(tt.key)
			if !ok || got != tt.want {
				t.Errorf("%s = %q, want %q", tt.key, got, tt.want)
			}
			if src := cfg.Sources[tt.key].String(); src != tt.wantSource {
				t.Errorf("source = %q, want %q", src, tt.wantSource)
			}
		})
	}
}

func TestResolveTypedFields(t *testing.T) {
	cfg, warns, err := layers{rc: `
MAX_CALLS_PER_HOUR=42
CLAUDE_TIMEOUT_MINUTES=20
SESSION_EXPIRY_HOURS=48
CB_COOLDOWN_MINUTES=0
ALLOWED_TOOLS="Read, Bash(git log --format=%h,%s) ,,Write"
OPTIONAL_SECTIONS="Later, Someday"
`, env: map[string]string{"RALPH_MAX_RUNTIME": "1h30m", "RALPH_MAX_COST": "2.5"}}.resolve(t)
	if err != nil || len(warns) != 0 {
		t.Fatalf("err=%v warns=%v", err, warns)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"MaxCallsPerHour", cfg.MaxCallsPerHour, 42},
		{"AgentTimeout", cfg.AgentTimeout, 20 * time.Minute},
		{"SessionExpiry", cfg.SessionExpiry, 48 * time.Hour},
		{"Breaker.Cooldown", cfg.Breaker.Cooldown, time.Duration(0)},
		{"MaxRuntime", cfg.MaxRuntime, 90 * time.Minute},
		{"MaxCost", cfg.MaxCost, 2.5},
		{"AllowedTools", strings.Join(cfg.AllowedTools, "|"), "Read|Bash(git log --format=%h,%s)|Write"},
		{"OptionalSections", strings.Join(cfg.OptionalSections, "|"), "Later|Someday"},
		{"AgentCmd", cfg.AgentCmd, "claude"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestResolveDoesNotShareDefaults(t *testing.T) {
	d := Defaults()
	d.AllowedTools = []string{"Write"}
	cfg, _, _ := Resolve(d, nil, nil, nil)
	cfg.AllowedTools[0] = "changed"
	cfg.Sources["X"] = Source{}
	if d.AllowedTools[0] == "changed" || len(d.Sources) == len(cfg.Sources) {
		t.Error("Resolve shares memory with its defaults")
	}
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		in   layers
		want string
	}{
		{"not a number", layers{rc: "\n\n\nMAX_CALLS_PER_HOUR=abc"}, `.ralphrc:4: MAX_CALLS_PER_HOUR: "abc" is not a whole number`},
		{"alias named as written", layers{rc: "CLAUDE_SESSION_EXPIRY_HOURS=1.5"},
			`.ralphrc:1: CLAUDE_SESSION_EXPIRY_HOURS: "1.5" is not a whole number of hours`},
		{"negative threshold", layers{rc: "CB_NO_PROGRESS_THRESHOLD=-1"}, `.ralphrc:1: CB_NO_PROGRESS_THRESHOLD: "-1" must be at least 1`},
		{"zero calls", layers{rc: "MAX_CALLS_PER_HOUR=0"}, `.ralphrc:1: MAX_CALLS_PER_HOUR: "0" must be at least 1`},
		{"percent range", layers{rc: "CB_OUTPUT_DECLINE_THRESHOLD=150"}, `.ralphrc:1: CB_OUTPUT_DECLINE_THRESHOLD: "150" is out of range (0 to 100)`},
		{"too large", layers{rc: "MAX_LOOPS=99999999999999999999"}, `.ralphrc:1: MAX_LOOPS: "99999999999999999999" is too large`},
		{"minutes overflow", layers{rc: "CB_COOLDOWN_MINUTES=9223372036854775807"}, `.ralphrc:1: CB_COOLDOWN_MINUTES: "9223372036854775807" is too large`},
		{"bool", layers{rc: "CB_AUTO_RESET=maybe"}, `.ralphrc:1: CB_AUTO_RESET: "maybe" is not true or false`},
		{"enum", layers{rc: "CLAUDE_OUTPUT_FORMAT=xml"}, `.ralphrc:1: CLAUDE_OUTPUT_FORMAT: "xml" is not one of: json, text, stream-json`},
		{"env", layers{env: map[string]string{"RALPH_MAX_LOOPS": "x"}}, `env RALPH_MAX_LOOPS: "x" is not a whole number`},
		{"env alias", layers{env: map[string]string{"CLAUDE_USE_CONTINUE": "nope"}}, `env CLAUDE_USE_CONTINUE: "nope" is not true or false`},
		{"flag", layers{flags: [][3]string{{"MAX_CALLS_PER_HOUR", "--calls", "abc"}}}, `flag --calls: "abc" is not a whole number`},
		{"duration", layers{flags: [][3]string{{"DELAY", "--delay", "soon"}}}, `flag --delay: "soon" is not a duration (like 30s, 5m or 1h30m)`},
		{"negative duration", layers{flags: [][3]string{{"MAX_RUNTIME", "--max-runtime", "-5m"}}}, `flag --max-runtime: "-5m" must not be negative`},
		{"negative cost", layers{flags: [][3]string{{"MAX_COST", "--max-cost", "-1"}}}, `flag --max-cost: "-1" must not be negative`},
		{"cost", layers{rc: "MAX_COST=lots"}, `.ralphrc:1: MAX_COST: "lots" is not a number`},
		{"tools", layers{rc: `ALLOWED_TOOLS="Read,Bash(git log"`}, `.ralphrc:1: ALLOWED_TOOLS: unbalanced '(' in "Read,Bash(git log"`},
		{"version", layers{rc: "CLAUDE_MIN_VERSION=latest"}, `.ralphrc:1: CLAUDE_MIN_VERSION: "latest" is not a version like 2.0.76`},
		{"agent command", layers{rc: `CLAUDE_CODE_CMD='claude "x'`}, `.ralphrc:1: CLAUDE_CODE_CMD: unterminated double quote in "claude \"x"`},
		{"agent command operator", layers{env: map[string]string{"CLAUDE_CODE_CMD": "cd x && claude"}},
			`env CLAUDE_CODE_CMD: shell operator '&' is not supported (no shell runs the agent command) in "cd x && claude"`},
		{"command provider needs a command", layers{flags: [][3]string{{"AGENT_PROVIDER", "--agent", "command"}}},
			`flag --agent: "command" needs an agent command: set AGENT_CMD or pass --agent-cmd`},
		{"not a key", layers{flags: [][3]string{{"MAX_CALL", "--max-call", "1"}}}, `flag --max-call: "MAX_CALL" is not a canonical configuration key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.in.resolve(t)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant  %s", err, tt.want)
			}
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Errorf("%T is not a *ValueError", err)
			}
		})
	}
}

func TestAllBadValuesReported(t *testing.T) {
	_, _, err := layers{rc: "MAX_CALLS_PER_HOUR=x\nMAX_LOOPS=y", env: map[string]string{"RALPH_DELAY": "z"}}.resolve(t)
	want := ".ralphrc:1: MAX_CALLS_PER_HOUR: \"x\" is not a whole number\n" +
		".ralphrc:2: MAX_LOOPS: \"y\" is not a whole number\n" +
		"env RALPH_DELAY: \"z\" is not a duration (like 30s, 5m or 1h30m)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestOverriddenBadValueIsAWarning(t *testing.T) {
	cfg, warns, err := layers{rc: "MAX_CALLS_PER_HOUR=abc", flags: [][3]string{{"MAX_CALLS_PER_HOUR", "--calls", "7"}}}.resolve(t)
	if err != nil || cfg.MaxCallsPerHour != 7 {
		t.Fatalf("err=%v calls=%d", err, cfg.MaxCallsPerHour)
	}
	want := `.ralphrc:1: MAX_CALLS_PER_HOUR: "abc" is not a whole number (overridden by flag --calls)`
	if len(warns) != 1 || warns[0].String() != want {
		t.Errorf("warns = %v", warns)
	}
	// Every overridden bad value becomes a warning; a later bad one is an error, once.
	_, warns, err = layers{rc: "MAX_LOOPS=a", env: map[string]string{"RALPH_MAX_LOOPS": "b"},
		flags: [][3]string{{"MAX_LOOPS", "--max-loops", "3"}}}.resolve(t)
	if err != nil || len(warns) != 2 {
		t.Errorf("err=%v warns=%v", err, warns)
	}
	_, warns, err = layers{rc: "MAX_LOOPS=a", env: map[string]string{"RALPH_MAX_LOOPS": "3"},
		flags: [][3]string{{"MAX_LOOPS", "--max-loops", "c"}}}.resolve(t)
	if len(warns) != 1 || err == nil || err.Error() != `flag --max-loops: "c" is not a whole number` {
		t.Errorf("err=%v warns=%v", err, warns)
	}
	// A bad value above a good one is still an error.
	if _, _, err := (layers{rc: "MAX_CALLS_PER_HOUR=7", flags: [][3]string{{"MAX_CALLS_PER_HOUR", "--calls", "abc"}}}).resolve(t); err == nil {
		t.Error("bad flag over good rc value: no error")
	}
}

func TestRepositoryPolicyWarnings(t *testing.T) {
	_, warns, err := layers{rc: "RALPH_DIR=/elsewhere\nCLAUDE_CODE_CMD=./run-me\nCLAUDE_CODE_CMD=claude"}.resolve(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0].String() != `.ralphrc:1: RALPH_DIR="/elsewhere" ignored: a repository's .ralphrc may not choose this; `+
		`set it in the environment (export RALPH_DIR=...) or with a flag` {
		t.Errorf("warns = %v", warns)
	}
	cfg, warns, err := layers{rc: "CLAUDE_CODE_CMD='./run-me --fast'"}.resolve(t)
	if err != nil || cfg.AgentCmd != "./run-me --fast" {
		t.Fatalf("err=%v cmd=%q", err, cfg.AgentCmd)
	}
	if len(warns) != 0 || len(NeedsTrust(cfg)) != 1 {
		t.Errorf("warns = %v, needs trust %v: the custom command must need trust (and not only be warned about)", warns, NeedsTrust(cfg))
	}
}

// A .ralphrc names the prompt that goes to the agent: only a file inside
// its project. The user may name any file.
func TestPromptFileFromRepositoryStaysInProject(t *testing.T) {
	for _, tt := range []struct {
		in      layers
		want    string // the value taken, or "" for a refusal
		refusal string
	}{
		{in: layers{rc: "PROMPT_FILE=docs/prompt.md"}, want: "docs/prompt.md"},
		{in: layers{rc: "PROMPT_FILE=.ralph/PROMPT.md"}, want: ".ralph/PROMPT.md"},
		{in: layers{rc: "PROMPT_FILE=/home/u/.ssh/id_ed25519"}, refusal: "may only name a file inside the project"},
		{in: layers{rc: "PROMPT_FILE=../../.ssh/id_ed25519"}, refusal: "may only name a file inside the project"},
		{in: layers{rc: "PROMPT_FILE=docs/../../x"}, refusal: "may only name a file inside the project"},
		{in: layers{env: map[string]string{"RALPH_PROMPT_FILE": "/srv/prompts/a.md"}}, want: "/srv/prompts/a.md"},
		{in: layers{flags: [][3]string{{"PROMPT_FILE", "--prompt", "../shared.md"}}}, want: "../shared.md"},
	} {
		cfg, _, err := tt.in.resolve(t)
		if tt.refusal != "" {
			if err == nil || !strings.Contains(err.Error(), tt.refusal) || !strings.Contains(err.Error(), "PROMPT_FILE") {
				t.Errorf("%+v: err = %v, want a refusal naming PROMPT_FILE", tt.in, err)
			}
			continue
		}
		if err != nil || cfg.PromptFile != tt.want {
			t.Errorf("%+v: PromptFile = %q, %v; want %q", tt.in, cfg.PromptFile, err, tt.want)
		}
	}
}

func TestSourceStrings(t *testing.T) {
	for _, tt := range []struct {
		s    Source
		want string
	}{
		{Source{}, "default"},
		{Source{Kind: SourceRC, File: "a/.ralphrc", Line: 3}, "a/.ralphrc:3"},
		{Source{Kind: SourceRC, File: "a/.ralphrc"}, "a/.ralphrc"},
		{Source{Kind: SourceEnv, Name: "X"}, "env X"},
		{Source{Kind: SourceFlag, Name: "--calls"}, "flag --calls"},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%+v = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// Durations with units are accepted for every time key; a bare number keeps
// the unit the key's name (and the bash tool) gives it.
func TestTimeKeysTakeUnits(t *testing.T) {
	cfg, warns, err := layers{rc: "CLAUDE_TIMEOUT_MINUTES=90s\nSESSION_EXPIRY_HOURS=90m\nUSAGE_LIMIT_WAIT_MINUTES=2h\n",
		env: map[string]string{"RALPH_MAX_RUNTIME": "10"}}.resolve(t)
	if err != nil || len(warns) != 0 {
		t.Fatalf("err=%v warns=%v", err, warns)
	}
	if cfg.AgentTimeout != 90*time.Second || cfg.SessionExpiry != 90*time.Minute || cfg.UsageLimitWait != 2*time.Hour || cfg.MaxRuntime != 10*time.Second {
		t.Errorf("timeout %s, expiry %s, usage wait %s, runtime %s", cfg.AgentTimeout, cfg.SessionExpiry, cfg.UsageLimitWait, cfg.MaxRuntime)
	}
	// Shown back in the key's unit when whole, with its own unit when not.
	for key, want := range map[string]string{"CLAUDE_TIMEOUT_MINUTES": "1m30s", "SESSION_EXPIRY_HOURS": "1h30m", "USAGE_LIMIT_WAIT_MINUTES": "120", "MAX_RUNTIME": "10s"} {
		if got, _ := cfg.Value(key); got != want {
			t.Errorf("%s shows as %q, want %q", key, got, want)
		}
	}
	if _, _, err := (layers{rc: "CLAUDE_TIMEOUT_MINUTES=20s\n"}).resolve(t); err == nil || !strings.Contains(err.Error(), "at least 1m0s") {
		t.Errorf("below the minimum: %v", err)
	}
}

// A bare number of minutes past what anyone means (a call over two hours,
// a wait over a day) is taken as written, with a warning
// that says what it means; a unit or a plausible number says nothing.
func TestImplausibleMinutesWarn(t *testing.T) {
	for _, tt := range []struct {
		rc, warn string
	}{
		{"CLAUDE_TIMEOUT_MINUTES=600\n", "600 means 600 minutes (10h): a bare number is minutes here, as in the bash tool; write 600s for seconds"},
		{"CLAUDE_TIMEOUT_MINUTES=120\n", ""},
		{"CLAUDE_TIMEOUT_MINUTES=121\n", "121 means 121 minutes (2h1m)"},
		{"USAGE_LIMIT_WAIT_MINUTES=600\n", ""},
		{"USAGE_LIMIT_WAIT_MINUTES=1441\n", "1441 means 1441 minutes (24h1m)"},
		{"CLAUDE_TIMEOUT_MINUTES=600m\n", ""},
		{"SESSION_EXPIRY_HOURS=48\n", ""},
	} {
		cfg, warns, err := layers{rc: tt.rc}.resolve(t)
		if err != nil {
			t.Fatalf("%q: %v", tt.rc, err)
		}
		got := fmt.Sprint(warns)
		if tt.warn == "" && len(warns) != 0 || tt.warn != "" && !strings.Contains(got, tt.warn) {
			t.Errorf("%q: warnings %s, want %q", tt.rc, got, tt.warn)
		}
		if tt.rc == "CLAUDE_TIMEOUT_MINUTES=600\n" && cfg.AgentTimeout != 10*time.Hour {
			t.Errorf("600 minutes became %s", cfg.AgentTimeout)
		}
	}
}
