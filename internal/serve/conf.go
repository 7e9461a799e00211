package serve

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"ralph/internal/account"
	"ralph/internal/budget"
	"ralph/internal/fleet"
	"ralph/internal/redact"
)

// Conf is the daemon's config file, RALPH_HOME/serve.conf (or --config):
// what an operator would otherwise put on the command line or in the
// service's environment. It is read as data, never run.
//
//	# ralph serve
//	LISTEN=127.0.0.1:7777
//	MAX_PARALLEL=4
//	MAX_CONNECTIONS=1024             # the HTTP server's connection limit
//	METRICS_LISTEN=10.0.0.5:9477     # GET /metrics without the token, here only
//	HISTORY_DAYS=30                  # how long a finished task is kept (0: for ever)
//	SESSION=api=/srv/src/api
//	SESSION=web=/srv/src/web
//	TELEGRAM_BOT_TOKEN=123:abc       # any other KEY is a default for the environment
//	RALPH_MAX_CALLS_PER_HOUR=60
//	RALPH_FLEET_MAX_COST_PER_DAY=12  # daily budgets, docs/budgets.md
//	BUDGET_TIMEZONE=Europe/Berlin
//	RALPH_ACCOUNT_WORK=claude config=/home/me/.claude-work sessions=api
//	RALPH_SESSION_PRIORITIES=api:10,web:5
type Conf struct {
	Listen      string
	MaxParallel int
	// MaxConns is MAX_CONNECTIONS, the HTTP server's connection limit.
	MaxConns int
	// MetricsListen is METRICS_LISTEN, a listener of the metrics' own.
	MetricsListen string
	// HistoryDays is HISTORY_DAYS, how long a finished task is kept (0:
	// for ever); HistoryDaysSet says the file gives it.
	HistoryDays    int
	HistoryDaysSet bool
	Sessions       []Session
	// Env holds the other settings, in file order: each is the default of
	// the environment variable of that name (the environment wins).
	Env []EnvSetting
	// Secret is set when a setting's name says it holds a credential: the
	// file must then be readable by its owner only.
	Secret bool
}

// EnvSetting is one KEY=VALUE of the config file, with its line.
type EnvSetting struct {
	Key, Value string
	Line       int
}

var confKey = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// ParseConf reads a config file; name is used in errors ("serve.conf:3:
// …"). Every problem is an error: a daemon that starts with half its
// configuration is worse than one that says what is wrong.
func ParseConf(name string, data []byte) (Conf, error) {
	var c Conf
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return c, fmt.Errorf("%s:%d: NUL byte: this is not a text file", name, 1+bytes.Count(data[:i], []byte("\n")))
	}
	seen := map[string]int{}
	for i, raw := range strings.Split(string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), "\n") {
		n := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fail := func(format string, a ...any) (Conf, error) {
			return Conf{}, fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, a...))
		}
		key, rest, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(strings.TrimPrefix(key, "export "))
		if !ok || !confKey.MatchString(key) {
			return fail("want KEY=VALUE with KEY in capitals, like LISTEN=127.0.0.1:7777")
		}
		value, err := confValue(rest)
		if err != nil {
			return fail("%s: %v", key, err)
		}
		if prev, dup := seen[key]; dup && key != "SESSION" {
			return fail("%s is set again (first on line %d)", key, prev)
		}
		seen[key] = n
		switch key {
		case "LISTEN":
			if value == "" {
				return fail("LISTEN: want an address like 127.0.0.1:7777")
			}
			c.Listen = value
		case "METRICS_LISTEN":
			if value == "" {
				return fail("METRICS_LISTEN: want an address like 127.0.0.1:9477")
			}
			c.MetricsListen = value
		case "MAX_PARALLEL":
			v, err := strconv.Atoi(value)
			if err != nil || v < 1 {
				return fail("MAX_PARALLEL=%q: want a whole number, 1 or more", value)
			}
			c.MaxParallel = v
		case "MAX_CONNECTIONS":
			v, err := strconv.Atoi(value)
			if err != nil || v < 1 {
				return fail("MAX_CONNECTIONS=%q: want a whole number, 1 or more", value)
			}
			c.MaxConns = v
		case "HISTORY_DAYS":
			v, err := strconv.Atoi(value)
			if err != nil || v < 0 {
				return fail("HISTORY_DAYS=%q: want a whole number of days, 0 (keep every task) or more", value)
			}
			c.HistoryDays, c.HistoryDaysSet = v, true
		case "SESSION":
			s, err := ParseSession(value)
			if err != nil {
				return fail("SESSION: %v", err)
			}
			for _, o := range c.Sessions {
				if o.Name == s.Name {
					return fail("session %q is registered twice", s.Name)
				}
			}
			c.Sessions = append(c.Sessions, s)
		default:
			if err := budget.Check(key, value); err != nil {
				return fail("%s=%q: %v", key, value, err)
			}
			if key == fleet.EnvPriorities {
				if _, err := fleet.ParsePriorities(value); err != nil {
					return fail("%s: %v", key, err)
				}
			}
			if err := account.Check(key, value); err != nil {
				// The value is not quoted: a mistaken line may hold a key.
				return fail("%s: %v", key, err)
			}
			if redact.IsSecretName(key) {
				c.Secret = true
			}
			c.Env = append(c.Env, EnvSetting{Key: key, Value: value, Line: n})
		}
	}
	return c, nil
}

// confValue is the value after '=': bare (up to a " #" comment) or in one
// pair of quotes. Nothing is expanded: a $ is a dollar sign.
func confValue(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if q := s[0]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return "", fmt.Errorf("unterminated %c quote", q)
		}
		after := strings.TrimSpace(s[end+2:])
		if after != "" && !strings.HasPrefix(after, "#") {
			return "", fmt.Errorf("text after the closing quote: %q", after)
		}
		return s[1 : end+1], nil
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "\t#"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s), nil
}
