package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"ralph/internal/redact"
)

// SourceKind is the layer a value came from, lowest precedence first.
type SourceKind int

// Layers, in increasing precedence.
const (
	SourceDefault SourceKind = iota
	SourceRC
	SourceEnv
	SourceFlag
)

// Source says where a value came from, precisely enough for a message.
type Source struct {
	Kind SourceKind
	File string // SourceRC: the file name as given to the parser
	Line int    // SourceRC: 1-based; 0 when not about one line
	Name string // the key as written, the environment variable, or the flag ("--calls")
}

// String is the message prefix: ".ralphrc:4", "env RALPH_MAX_LOOPS",
// "flag --calls" or "default".
func (s Source) String() string {
	switch s.Kind {
	case SourceRC:
		if s.Line > 0 {
			return s.File + ":" + strconv.Itoa(s.Line)
		}
		return s.File
	case SourceEnv:
		return "env " + s.Name
	case SourceFlag:
		return "flag " + s.Name
	}
	return "default"
}

// Entry is one value of one layer, still as text.
type Entry struct {
	Key    string // canonical key; for a secret, its variable name
	Value  string
	Source Source
	Secret bool // a secret-looking variable from .ralphrc; never printed
}

// Format prints an entry without ever showing a secret's value, whatever the
// verb, so dumping a parsed layer is safe.
func (e Entry) Format(f fmt.State, _ rune) {
	v := strconv.Quote(e.Value)
	if e.Secret {
		v = redactedText
	}
	fmt.Fprintf(f, "{%s=%s %s}", e.Key, v, e.Source)
}

// Warning is a problem that does not stop ralph: the line or value is skipped
// or taken as documented, and the user is told.
type Warning struct {
	Source Source
	Key    string // the key concerned, when there is one
	Msg    string
	// Skipped: the line could not be read and its setting was lost
	// (commands that act on the settings refuse such a file).
	Skipped bool
}

// String renders ".ralphrc:7: unknown key FOO (ignored)".
func (w Warning) String() string { return w.Source.String() + ": " + w.Msg }

// ValueError is a value that cannot be used; ralph refuses to start on it.
type ValueError struct {
	Source Source
	Key    string // canonical key
	Value  string
	Msg    string // e.g. `"abc" is not a whole number`
}

// Error renders `.ralphrc:4: MAX_CALLS_PER_HOUR: "abc" is not a whole number`,
// `env RALPH_MAX_LOOPS: ...` or `flag --calls: ...`: the environment variable
// and the flag already name the setting.
func (e *ValueError) Error() string {
	switch e.Source.Kind {
	case SourceEnv, SourceFlag:
		return e.Source.String() + ": " + e.Msg
	case SourceRC:
		name := e.Source.Name
		if name == "" {
			name = e.Key
		}
		return e.Source.String() + ": " + name + ": " + e.Msg
	}
	return "default " + e.Key + ": " + e.Msg
}

// Layer is one source's values by canonical key: the parsed .ralphrc, the
// environment (FromEnv) or the flags the user passed.
type Layer map[string]Entry

// SetFlag records a flag the user passed. The CLI calls it only for flags
// whose Changed is true, so unset flags never override lower layers. key may
// be an alias; value is the flag's text, validated by Resolve.
func (l Layer) SetFlag(key, flag, value string) {
	if k := findKey(key); k != nil {
		key = k.Name
	}
	l[key] = Entry{Key: key, Value: value, Source: Source{Kind: SourceFlag, Name: flag}}
}

// FromEnv reads every key from the environment under the names Describe
// lists (RALPH_<KEY>, and the bash tool's own names). An empty variable counts
// as unset, as it did in the bash tool. Values are taken literally.
func FromEnv(getenv func(string) string) Layer {
	l := Layer{}
	for i := range keyTable {
		k := &keyTable[i]
		if k.kind == kInert {
			continue
		}
		for _, name := range envNames(k) {
			if v := getenv(name); v != "" {
				l[k.Name] = Entry{Key: k.Name, Value: v, Source: Source{Kind: SourceEnv, Name: name}}
				break
			}
		}
	}
	return l
}

// Resolve layers the sources once, flags over environment over .ralphrc over
// defaults, and returns the typed result. Any layer may be nil.
//
// A bad value is an error (all of them are joined, each a *ValueError) unless
// a higher layer sets the same key to a good value: then it is only a warning,
// since the value ralph would use is fine. On error the Config keeps the lower
// layer's value for the bad keys, so `ralph doctor` can still show the rest,
// but ralph must not run on it.
func Resolve(defaults Config, rc, env, flags Layer) (Config, []Warning, error) {
	cfg := defaults.clone()
	var warns []Warning
	pending := map[string][]*ValueError{} // bad values not overridden (yet), by key
	var order []string                    // keys of pending, first error first
	var misuse []error
	for _, layer := range []Layer{rc, env, flags} {
		for _, e := range layer.sorted() {
			if e.Secret && e.Source.Kind == SourceRC {
				// Known from here on: masked by value in everything ralph
				// writes, whatever its shape.
				redact.Add(e.Value)
				cfg.Secrets[e.Key] = Secret(e.Value)
				cfg.Sources[e.Key] = e.Source
				continue
			}
			k := findKey(e.Key)
			if k == nil || k.Name != e.Key {
				// Only a caller bug gets here: the parser, FromEnv and
				// SetFlag store canonical keys.
				misuse = append(misuse, &ValueError{Source: e.Source, Key: e.Key, Value: e.Value,
					Msg: fmt.Sprintf("%q is not a canonical configuration key", e.Key)})
				continue
			}
			w, verr, took := apply(&cfg, k, e)
			if w != nil {
				warns = append(warns, *w)
			}
			switch {
			case verr != nil:
				if !slices.Contains(order, k.Name) {
					order = append(order, k.Name)
				}
				pending[k.Name] = append(pending[k.Name], verr)
			case took:
				for _, old := range pending[k.Name] {
					msg := strings.TrimPrefix(old.Error(), old.Source.String()+": ")
					warns = append(warns, Warning{Source: old.Source, Key: k.Name,
						Msg: fmt.Sprintf("%s (overridden by %s)", msg, e.Source)})
				}
				pending[k.Name] = nil
			}
		}
	}
	errs := misuse
	for _, key := range order {
		for _, verr := range pending[key] {
			errs = append(errs, verr)
		}
	}
	if err := finishAgent(&cfg); err != nil {
		errs = append(errs, err)
	}
	return cfg, warns, errors.Join(errs...)
}

// sorted returns the entries in file order (then by key), so messages about
// one .ralphrc come out in the order of its lines. The map key is the key.
func (l Layer) sorted() []Entry {
	entries := make([]Entry, 0, len(l))
	for key, e := range l {
		e.Key = key
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		if a.Source.Line != b.Source.Line {
			return a.Source.Line - b.Source.Line
		}
		return strings.Compare(a.Key, b.Key)
	})
	return entries
}

// apply stores one entry in cfg. It returns a warning to show, the value's
// error if it is unusable, and whether the value was taken.
func apply(cfg *Config, k *keyInfo, e Entry) (*Warning, *ValueError, bool) {
	if k.kind == kInert || (e.Value == "" && !k.emptyOK) {
		// Empty means "not set", as ${VAR:-default} did in the bash tool,
		// so the template's SANDBOX_E2B_MAX_COST="" is harmless.
		return nil, nil, false
	}
	if k.unsupported != "" {
		v, problem := k.parse(e.Value)
		if def, _ := k.parse(k.Default); problem == "" && fmt.Sprint(v) != fmt.Sprint(def) {
			return nil, &ValueError{Source: e.Source, Key: k.Name, Value: e.Value, Msg: fmt.Sprintf(
				"not supported by ralph: %s; remove the line (only its default, %q, is accepted)", k.unsupported, k.Default)}, false
		}
	}
	var w *Warning
	if e.Source.Kind == SourceRC && !slices.Contains(k.stock, e.Value) {
		switch k.policy {
		case rcStockOnly:
			return &Warning{Source: e.Source, Key: k.Name, Msg: fmt.Sprintf(
				"%s=%q ignored: a repository's .ralphrc may not choose this; set it in the environment (export %s=...) or with a flag",
				e.Source.Name, e.Value, envNames(k)[0])}, nil, false
		case rcWarnCustom:
			// No warning: NeedsTrust lists these, and nothing runs until
			// the user has trusted the file (ralph trust).
		case rcInProject:
			// The file goes to the agent: a clone must not point it at
			// ~/.ssh. Reads inside the project are confined (store.ReadIn).
			if !filepath.IsLocal(e.Value) {
				return nil, &ValueError{Source: e.Source, Key: k.Name, Value: e.Value, Msg: fmt.Sprintf(
					"a repository's .ralphrc may only name a file inside the project (a relative path without ..); name another with --prompt or %s", envNames(k)[0])}, false
			}
		}
	}
	v, problem := k.parse(e.Value)
	if problem != "" {
		return nil, &ValueError{Source: e.Source, Key: k.Name, Value: e.Value, Msg: problem}, false
	}
	k.set(cfg, v)
	cfg.Sources[k.Name] = e.Source
	if w == nil {
		w = implausibleUnit(k, e, v)
	}
	return w, nil, true
}

// implausibleUnit warns about a bare number that is surely meant in another
// unit: the bash tool's minutes keys stay so (--timeout 600 is ten hours),
// but one agent call of more than two hours, or any wait of more than a
// day, is almost always seconds typed as minutes. (Hours keys are left
// alone: a session kept for 48 hours is plausible.)
func implausibleUnit(k *keyInfo, e Entry, v any) *Warning {
	limit := 24 * time.Hour
	if k.Name == "CLAUDE_TIMEOUT_MINUTES" {
		limit = 2 * time.Hour
	}
	d, ok := v.(time.Duration)
	if !ok || k.kind != kMinutes || d <= limit {
		return nil
	}
	if _, err := strconv.ParseInt(strings.TrimSpace(e.Value), 10, 64); err != nil {
		return nil // a unit was written: it says what it means
	}
	n := strings.TrimSpace(e.Value)
	return &Warning{Source: e.Source, Key: k.Name, Msg: fmt.Sprintf(
		"%s means %s minutes (%s): a bare number is minutes here, as in the bash tool; write %ss for seconds",
		n, n, fmtDuration(d), n)}
}

// fmtDuration drops time.Duration's zero tails: 10h, not 10h0m0s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// finishAgent fills in the provider's own command when no layer chose one:
// the default "claude" is only right for the claude provider. (A configured
// AGENT_CMD was already checked by its kCommand parse.)
func finishAgent(cfg *Config) error {
	src := cfg.Sources["AGENT_CMD"]
	// CLAUDE_CODE_CMD names Claude's command (the bash tool's key): with
	// another main agent it must not become that agent's executable.
	if src.Kind != SourceDefault && cfg.AgentProvider != "claude" && strings.EqualFold(strings.TrimPrefix(src.Name, "RALPH_"), "CLAUDE_CODE_CMD") {
		cfg.ClaudeCmd = cfg.AgentCmd
		src.Kind = SourceDefault
	}
	if src.Kind != SourceDefault {
		return nil
	}
	cfg.AgentCmd = providerCommand(cfg.AgentProvider)
	if cfg.AgentCmd == "" {
		return &ValueError{Source: cfg.Sources["AGENT_PROVIDER"], Key: "AGENT_PROVIDER", Value: cfg.AgentProvider,
			Msg: `"command" needs an agent command: set AGENT_CMD or pass --agent-cmd`}
	}
	return nil
}

// checkAgents accepts a list of agent names other than "command".
func checkAgents(v string) string {
	for _, n := range strings.Split(v, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		switch n {
		case "claude", "codex", "gemini", "opencode":
		case "command":
			return `"command" cannot be a fallback agent`
		default:
			return fmt.Sprintf("unknown agent %q (want claude, codex, gemini or opencode)", n)
		}
	}
	return ""
}
