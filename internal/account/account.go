// Package account is the fleet's accounts: the agents' logins (a config
// directory or an API key each) that a daemon's loops run under, and the
// usage windows each one is known to be in (docs/budgets.md, "Accounts and
// usage windows"). Its decisions are pure: the daemon keeps the state.
package account

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Prefix starts every account's setting: RALPH_ACCOUNT_WORK names the
// account "work".
const Prefix = "RALPH_ACCOUNT_"

// Account is one login of one agent.
type Account struct {
	Name  string // lower case, from the setting's name
	Agent string // claude, codex or gemini
	// ConfigDir is the agent's config directory for this account (Claude
	// Code's CLAUDE_CONFIG_DIR, Codex's CODEX_HOME); KeyVar instead names
	// the daemon's environment variable that holds its API key. One of
	// the two is set.
	ConfigDir string
	KeyVar    string
	// Sessions are the sessions that may run under it; none: every
	// session of its agent.
	Sessions []string
}

// agentVars are, per agent, the variables an account sets in its calls'
// environment: the config directory's and the API key's ("": none).
var agentVars = map[string][2]string{
	"claude": {"CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY"},
	"codex":  {"CODEX_HOME", "OPENAI_API_KEY"},
	"gemini": {"", "GEMINI_API_KEY"},
}

var (
	accountName = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,63}$`)
	envName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sessionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// Parse reads one setting, RALPH_ACCOUNT_<NAME>=<agent> config=<dir> or
// <agent> key=<VAR>, then optionally sessions=<a,b>. Nothing in it is
// expanded or run. The error says what is wrong, never a key's value
// (the setting holds none: only a variable's name).
func Parse(key, value string) (Account, error) {
	name := strings.ToLower(strings.TrimPrefix(key, Prefix))
	if !strings.HasPrefix(key, Prefix) || !accountName.MatchString(name) {
		return Account{}, fmt.Errorf("want %s<NAME> with NAME in capitals, digits and '_'", Prefix)
	}
	f := strings.Fields(value)
	if len(f) == 0 {
		return Account{}, fmt.Errorf("want <agent> config=<dir> or <agent> key=<VARIABLE>, then sessions=<a,b> if not every session may use it")
	}
	if _, clash := agentVars[name]; clash || name == "opencode" {
		return Account{}, fmt.Errorf("%q is an agent's name, which stands for the daemon's own login of that agent: name the account otherwise", name)
	}
	a := Account{Name: name, Agent: f[0]}
	vars, ok := agentVars[a.Agent]
	if !ok {
		return Account{}, fmt.Errorf("agent %q: want one of claude, codex, gemini", a.Agent)
	}
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return Account{}, fmt.Errorf("%q: want config=<dir>, key=<VARIABLE> or sessions=<a,b>", shown(kv))
		}
		switch k {
		case "config":
			if vars[0] == "" {
				return Account{}, fmt.Errorf("%s has no config directory ralph can set: give key=<VARIABLE>", a.Agent)
			}
			if !strings.HasPrefix(v, "/") {
				return Account{}, fmt.Errorf("config=%s: want an absolute directory", v)
			}
			a.ConfigDir = v
		case "key":
			if !envName.MatchString(v) {
				// Not echoed: what is there may be the key itself.
				return Account{}, fmt.Errorf("key=: want the name of the environment variable that holds the key (never the key itself)")
			}
			a.KeyVar = v
		case "sessions":
			for _, s := range strings.Split(v, ",") {
				if !sessionName.MatchString(s) {
					return Account{}, fmt.Errorf("sessions=%s: %q is not a session's name", v, s)
				}
				a.Sessions = append(a.Sessions, s)
			}
		default:
			return Account{}, fmt.Errorf("%q: want config=<dir>, key=<VARIABLE> or sessions=<a,b>", shown(kv))
		}
	}
	if (a.ConfigDir == "") == (a.KeyVar == "") {
		return Account{}, fmt.Errorf("want one of config=<dir> and key=<VARIABLE>")
	}
	return a, nil
}

// Check validates one setting of a config file (nil for a name that is
// not an account's), so the file's error can name its line.
func Check(key, value string) error {
	if !strings.HasPrefix(key, Prefix) {
		return nil
	}
	_, err := Parse(key, value)
	return err
}

// FromEnv reads every account of environ (os.Environ's form); getenv
// finds each key's variable, which must be set: a call under an account
// without its key would run under whatever login the machine has.
func FromEnv(environ []string, getenv func(string) string) ([]Account, error) {
	var out []Account
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, Prefix) {
			continue
		}
		a, err := Parse(k, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if a.KeyVar != "" && getenv(a.KeyVar) == "" {
			return nil, fmt.Errorf("%s: key=%s: that variable is not set", k, a.KeyVar)
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Serves says whether session may run under a.
func (a Account) Serves(session string) bool {
	return len(a.Sessions) == 0 || slices.Contains(a.Sessions, session)
}

// Env is what a call under a adds to its environment: the config
// directory's variable, or the API key's with the value of KeyVar.
func (a Account) Env(getenv func(string) string) []string {
	vars := agentVars[a.Agent]
	if a.ConfigDir != "" {
		return []string{vars[0] + "=" + a.ConfigDir}
	}
	return []string{vars[1] + "=" + getenv(a.KeyVar)}
}

// Describe is the account as logs may show it: the directory or the
// variable's name, never a key.
func (a Account) Describe() string {
	s := a.Agent + " "
	if a.ConfigDir != "" {
		s += "config " + a.ConfigDir
	} else {
		s += "key in $" + a.KeyVar
	}
	if len(a.Sessions) > 0 {
		s += ", sessions " + strings.Join(a.Sessions, ",")
	}
	return s
}

// KeyVars are the variables holding the accounts' keys: the daemon keeps
// them from every agent's environment, so that a key reaches only its
// own account's calls.
func KeyVars(as []Account) []string {
	var out []string
	for _, a := range as {
		if a.KeyVar != "" {
			out = append(out, a.KeyVar)
		}
	}
	return out
}

// Secrets are the keys' values, for the redaction of logs.
func Secrets(as []Account, getenv func(string) string) []string {
	var out []string
	for _, v := range KeyVars(as) {
		if s := getenv(v); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// shown is a word of a setting as an error may quote it: a word that
// might be a pasted key is cut short.
func shown(w string) string {
	if len(w) > 12 {
		return w[:6] + "…"
	}
	return w
}
