package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/shellwords"
)

func TestKeyTableIsConsistent(t *testing.T) {
	seen := map[string]string{}
	for _, k := range Describe() {
		for _, n := range append([]string{k.Name}, k.Aliases...) {
			if other, dup := seen[n]; dup {
				t.Errorf("%s is both %s and %s", n, other, k.Name)
			}
			seen[n] = k.Name
			if !shellwords.IsName(n) || strings.ToUpper(n) != n {
				t.Errorf("%s: not an upper-case shell name", n)
			}
		}
		if k.Doc == "" || k.Group == "" || k.Origin == "" || k.Type == "" {
			t.Errorf("%s: missing doc, group, origin or type: %+v", k.Name, k)
		}
		if k.Type == "enum" && len(k.Values) == 0 {
			t.Errorf("%s: enum without values", k.Name)
		}
		if isSecretName(k.Name) {
			t.Errorf("%s would be mistaken for a secret", k.Name)
		}
		if k.Flag != "" && !strings.HasPrefix(k.Flag, "--") {
			t.Errorf("%s: flag %q", k.Name, k.Flag)
		}
	}
}

// Every Config field is set by exactly one key, so nothing is left out of the
// template, the environment or Redacted.
func TestEveryFieldHasOneKey(t *testing.T) {
	var c Config
	owners := map[uintptr]string{}
	for i := range keyTable {
		k := &keyTable[i]
		if k.kind == kInert {
			continue
		}
		p := reflect.ValueOf(k.field(&c)).Pointer()
		if other, dup := owners[p]; dup {
			t.Errorf("%s and %s set the same field", other, k.Name)
		}
		owners[p] = k.Name
	}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, name := v.Field(i), path+v.Type().Field(i).Name
			// ClaudeCmd is derived: CLAUDE_CODE_CMD given while another agent is the main one.
			if name == "Secrets" || name == "Sources" || name == "ClaudeCmd" {
				continue
			}
			if f.Kind() == reflect.Struct && f.Type() != reflect.TypeFor[time.Duration]() {
				walk(f, name+".")
				continue
			}
			if _, ok := owners[f.Addr().Pointer()]; !ok {
				t.Errorf("Config.%s has no key", name)
			}
		}
	}
	walk(reflect.ValueOf(&c).Elem(), "")
}

func TestDefaults(t *testing.T) {
	c := Defaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"MaxCallsPerHour", c.MaxCallsPerHour, 100},
		{"AgentTimeout", c.AgentTimeout, 15 * time.Minute},
		{"OutputFormat", c.OutputFormat, "json"},
		{"SessionContinuity", c.SessionContinuity, true},
		{"SessionExpiry", c.SessionExpiry, 24 * time.Hour},
		{"NoProgress", c.Breaker.NoProgressThreshold, 3},
		{"SameError", c.Breaker.SameErrorThreshold, 5},
		{"OutputDecline", c.Breaker.OutputDeclineThreshold, 70},
		{"PermissionDenial", c.Breaker.PermissionDenialThreshold, 2},
		{"Failure", c.Breaker.FailureThreshold, 5},
		{"Cooldown", c.Breaker.Cooldown, 30 * time.Minute},
		{"AutoReset", c.Breaker.AutoReset, false},
		{"AgentCmd", c.AgentCmd, "claude"},
		{"AgentProvider", c.AgentProvider, "claude"},
		{"MaxTokensPerHour", c.MaxTokensPerHour, 0},
		{"UsageLimitWait", c.UsageLimitWait, time.Hour},
		{"FailureBackoff", c.FailureBackoff, 30 * time.Second},
		{"OnUsageLimit", c.OnUsageLimit, "wait"},
		{"RalphDir", c.RalphDir, ".ralph"},
		{"PromptPath", c.PromptPath(), ".ralph/PROMPT.md"},
		{"OptionalSections", strings.Join(c.OptionalSections, "|"), "Optional|Future|Future Enhancements|Nice to Have"},
		{"AllowedTools", len(c.AllowedTools), 0}, // empty: the agent adapter's granular default
		{"E2BCostPerHour", c.Sandbox.E2BCostPerHour, 0.10},
		{"Sandbox.Provider", c.Sandbox.Provider, ""},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

// The template is generated from Describe: writing every default back as a
// .ralphrc must parse cleanly and resolve to the defaults.
func TestDefaultsRoundTripThroughRalphrc(t *testing.T) {
	var b strings.Builder
	for _, k := range Describe() {
		b.WriteString("# " + k.Doc + "\n" + FormatAssignment(k.Name, k.Default) + "\n")
	}
	rc, warns, err := ParseRalphrc(".ralphrc", []byte(b.String()))
	if err != nil || len(warns) != 0 {
		t.Fatalf("err=%v warns=%v", err, warns)
	}
	cfg, warns, err := Resolve(Defaults(), rc, nil, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("err=%v warns=%v", err, warns)
	}
	want := Defaults()
	for _, k := range Describe() {
		got, _ := cfg.Value(k.Name)
		w, _ := want.Value(k.Name)
		if got != w {
			t.Errorf("%s: %q after round trip, want %q", k.Name, got, w)
		}
	}
}

func TestEnvNames(t *testing.T) {
	tests := map[string][]string{
		"MAX_CALLS_PER_HOUR": {"RALPH_MAX_CALLS_PER_HOUR", "MAX_CALLS_PER_HOUR"},
		"ALLOWED_TOOLS":      {"RALPH_ALLOWED_TOOLS", "ALLOWED_TOOLS", "CLAUDE_ALLOWED_TOOLS", "RALPH_CLAUDE_ALLOWED_TOOLS"},
		"VERBOSE":            {"RALPH_VERBOSE", "VERBOSE_PROGRESS", "RALPH_VERBOSE_PROGRESS"},
		"AGENT_CMD":          {"RALPH_AGENT_CMD", "CLAUDE_CODE_CMD", "RALPH_CLAUDE_CODE_CMD"},
		"DELAY":              {"RALPH_DELAY"},
		"RALPH_DIR":          {"RALPH_DIR"},
	}
	for key, want := range tests {
		k, ok := Lookup(key)
		if !ok || !slices.Equal(k.Env, want) {
			t.Errorf("%s env = %q, want %q", key, k.Env, want)
		}
	}
	if k, ok := Lookup("CLAUDE_CODE_CMD"); !ok || k.Name != "AGENT_CMD" || k.RepoRestricted {
		t.Errorf("Lookup by alias = %+v", k)
	}
	if k, _ := Lookup("RALPH_DIR"); !k.RepoRestricted {
		t.Error("RALPH_DIR should be repo-restricted")
	}
	if _, ok := Lookup("NOPE"); ok {
		t.Error("Lookup(NOPE) found something")
	}
}

func TestSuggest(t *testing.T) {
	for in, want := range map[string]string{
		"MAX_CALL_PER_HOUR":        "MAX_CALLS_PER_HOUR",
		"max_calls_per_hour":       "MAX_CALLS_PER_HOUR",
		"CB_NO_PROGRES_THRESHOLD":  "CB_NO_PROGRESS_THRESHOLD",
		"ALLOWED_TOOL":             "ALLOWED_TOOLS",
		"CLAUDE_TIMEOUT":           "",
		"FOO":                      "",
		"LIV":                      "",
		"live":                     "LIVE",
		strings.Repeat("X", 10000): "",
	} {
		if got := suggest(in); got != want {
			t.Errorf("suggest(%.20s) = %q, want %q", in, got, want)
		}
	}
}
