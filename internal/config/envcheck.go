package config

import (
	"fmt"
	"slices"
	"strings"

	suggestpkg "ralph/internal/suggest"
)

// fleetEnv are the RALPH_ variables read outside the key table: the
// daemon's, the client's and the requests' settings, and the ones ralph
// sets for its own children. UnknownEnv must know them all, or it would
// warn about a documented name.
var fleetEnv = []string{
	"RALPH_HOME", "RALPH_SERVER", "RALPH_API_TOKEN", "RALPH_TRUST_FILE", "RALPH_TRACE",
	"RALPH_GITHUB_REPOS", "RALPH_GITHUB_LABEL", "RALPH_GITHUB_POLL",
	"RALPH_SLACK_REPO", "RALPH_SLACK_CHANNELS", "RALPH_SLACK_USERS",
	"RALPH_REQUEST_MAX_LOOPS", "RALPH_REQUEST_REMIND", "RALPH_REQUEST_SANDBOX", "RALPH_PR_FOLLOWUP_ROUNDS",
	"RALPH_TEMPORAL_API_KEY", "RALPH_TEMPORAL_CLI", "RALPH_JAEGER", // the CLI and the trace backend of the tests, as they are built
	"RALPH_SESSION_PRIORITIES", "RALPH_WORKER_ACCOUNTS",
	"RALPH_FLEET_MAX_COST_PER_DAY", "RALPH_SESSION_MAX_COST_PER_DAY", "RALPH_FLEET_MAX_TOKENS_PER_DAY", "RALPH_SESSION_MAX_TOKENS_PER_DAY",
	"RALPH_AGENT_GROUP", "RALPH_CALL_DIR", "RALPH_GATE_SECRET", "RALPH_MCP_BRIDGE", // set by ralph on each agent it starts
}

// harnessPrefixes are variables of ralph's own test suite and benchmarks,
// read by its test programs — and RALPH_TEST_CLOCK_OFFSET by `ralph serve`,
// a clock moved for the tests of its daily budgets, never set otherwise.
var harnessPrefixes = []string{"RALPH_FAKE_", "RALPH_TEST_", "RALPH_BENCH_"}

// fleetPrefixes start variables the daemon reads by prefix: its accounts
// (RALPH_ACCOUNT_<NAME>, docs/budgets.md).
var fleetPrefixes = []string{"RALPH_ACCOUNT_"}

// UnknownEnv warns about each RALPH_ variable in environ that ralph does
// not read — a typo, or a name from another tool — with the name it was
// probably meant to be. Without it, RALPH_MAX_LOPS=5 would be ignored
// without a word and the run would go on unbounded.
func UnknownEnv(environ []string) []Warning {
	known := knownEnv()
	var warns []Warning
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		// Empty is "not set", as everywhere in ralph's settings.
		if !strings.HasPrefix(name, "RALPH_") || value == "" || known[name] || harness(name) || hasPrefix(name, fleetPrefixes) {
			continue
		}
		msg := "unknown variable (ignored)"
		if s := suggestpkg.Closest(name, sortedKeys(known)); s != "" {
			msg += fmt.Sprintf("; did you mean %s?", s)
		}
		warns = append(warns, Warning{Source: Source{Kind: SourceEnv, Name: name}, Key: name, Msg: msg})
	}
	slices.SortFunc(warns, func(a, b Warning) int { return strings.Compare(a.Key, b.Key) })
	return warns
}

func harness(name string) bool {
	for _, p := range harnessPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, "_BIN") // RALPH_CLAUDE_BIN…: the e2e tests' agent CLIs
}

// knownEnv is every RALPH_ name ralph reads.
func knownEnv() map[string]bool {
	known := map[string]bool{}
	for _, n := range fleetEnv {
		known[n] = true
	}
	for i := range keyTable {
		for _, n := range envNames(&keyTable[i]) {
			if strings.HasPrefix(n, "RALPH_") {
				known[n] = true
			}
		}
	}
	return known
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func hasPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
