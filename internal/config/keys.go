package config

import (
	suggestpkg "ralph/internal/suggest"

	"slices"
	"strings"
)

// kind says how a key's text is parsed and which Go type holds it.
type kind int

const (
	kString   kind = iota // free text
	kCommand              // words split like a shell would (see package shellwords)
	kEnum                 // one of KeyInfo.Values, matched case-insensitively
	kBool                 // true/false, yes/no, on/off, 1/0
	kInt                  // whole number within [min, max]
	kMinutes              // whole number of minutes → time.Duration
	kHours                // whole number of hours → time.Duration
	kSeconds              // whole number of seconds → time.Duration
	kDuration             // Go duration ("90s", "1h30m"); a bare number means seconds
	kFloat                // non-negative decimal number
	kList                 // comma separated; commas inside (...) do not split
	kInert                // accepted for compatibility, has no effect
)

var kindNames = [...]string{
	kString: "string", kCommand: "command", kEnum: "enum", kBool: "bool", kInt: "int",
	kMinutes: "minutes", kHours: "hours", kSeconds: "seconds", kDuration: "duration",
	kFloat: "float", kList: "list", kInert: "inert",
}

// rcPolicy says how much a repository's .ralphrc may decide for a key. A
// .ralphrc comes with the repository, so keys that choose what runs on the
// user's machine are treated with suspicion, as the bash tool does (its
// issue #346).
type rcPolicy int

const (
	rcAny        rcPolicy = iota // any valid value
	rcStockOnly                  // only the values in stock; others are ignored with a warning
	rcWarnCustom                 // any value, but non-stock ones need trust (NeedsTrust)
	rcInProject                  // a path inside the project: relative, without ".."
)

// Where a key comes from, for the key table and the report.
const (
	OriginBash    = "ralph-claude-code .ralphrc"
	OriginBashEnv = "ralph-claude-code env/flag"
	OriginNew     = "new in ralph"
)

// KeyInfo documents one configuration key. Describe returns one per key; the
// .ralphrc template and `ralph doctor` are generated from them.
type KeyInfo struct {
	Name    string   // canonical name, as written in .ralphrc
	Aliases []string // other names accepted in .ralphrc and the environment
	Env     []string // environment variables read, highest priority first
	Flag    string   // the ralph command-line flag that sets it, if any
	Type    string   // int, bool, string, list, duration, minutes, hours, seconds, float, enum, command, inert
	Values  []string // the allowed values of an enum
	Default string   // the default, written as it would be in .ralphrc
	Doc     string   // one line
	Group   string   // section of the template
	Origin  string   // OriginBash, OriginBashEnv or OriginNew
	// RepoRestricted is set for keys a .ralphrc may only set to stock values
	// (or not at all); custom values must come from the environment or a flag.
	RepoRestricted bool
	// Unsupported says why ralph does not implement a key of the bash tool.
	// Its default is accepted (old .ralphrc files list every key); any other
	// value is refused, so no setting is taken and then silently ignored.
	Unsupported string

	kind     kind
	min, max int64 // bounds of kInt and the whole-number durations; max 0 = none
	// emptyOK: an empty value is a real value ("no optional sections"), not "unset".
	emptyOK     bool
	policy      rcPolicy
	unsupported string                // see KeyInfo.Unsupported
	stock       []string              // values a .ralphrc may use under rcStockOnly / rcWarnCustom
	check       func(v string) string // extra validation of kString values; returns a problem
	field       func(c *Config) any   // pointer to the Config field that holds the value
}

// Describe returns every key in template order. The slices are copies.
func Describe() []KeyInfo {
	out := make([]KeyInfo, len(keyTable))
	for i := range keyTable {
		out[i] = describe(&keyTable[i])
	}
	return out
}

// describe is a row of the table as callers see it.
func describe(row *keyInfo) KeyInfo {
	k := *row
	k.Aliases = slices.Clone(k.Aliases)
	k.Values = slices.Clone(k.Values)
	k.Env = envNames(row)
	k.Type = kindNames[k.kind]
	k.RepoRestricted = k.policy == rcStockOnly
	k.Unsupported = k.unsupported
	k.stock, k.check, k.field = nil, nil, nil
	return k
}

// Lookup finds a key by its canonical name or an alias. Every command
// line's flags look theirs up at each start of ralph: only the row found is
// described.
func Lookup(name string) (KeyInfo, bool) {
	k := findKey(name)
	if k == nil {
		return KeyInfo{}, false
	}
	return describe(k), true
}

// findKey returns the table row for a canonical name or alias, or nil.
func findKey(name string) *keyInfo {
	for i := range keyTable {
		k := &keyTable[i]
		if k.Name == name || slices.Contains(k.Aliases, name) {
			return k
		}
	}
	return nil
}

// keyInfo is KeyInfo seen from inside the package; the alias keeps the table
// literal readable.
type keyInfo = KeyInfo

// envNames lists the environment variables read for a key. Every key can be
// given as RALPH_<KEY>. Names the bash tool used (canonical or alias) are also
// read bare, because its docs promise "all .ralphrc keys can be set as
// environment variables using the same name". Keys new in ralph are read only
// with the prefix: bare DELAY, LIVE or VERBOSE are too generic to trust.
func envNames(k *keyInfo) []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if strings.HasPrefix(k.Name, "RALPH_") {
		add(k.Name)
	} else {
		add("RALPH_" + k.Name)
	}
	if k.Origin != OriginNew {
		add(k.Name)
	}
	for _, a := range k.Aliases {
		add(a)
	}
	// Every name with ralph's prefix too: RALPH_CLAUDE_CODE_CMD is what
	// people write for the bash tool's CLAUDE_CODE_CMD.
	for _, a := range k.Aliases {
		if !strings.HasPrefix(a, "RALPH_") {
			add("RALPH_" + a)
		}
	}
	return names
}

// suggest returns the known name closest to an unknown one, or "" when none is
// close enough to be a likely typo.
func suggest(name string) string {
	var names []string
	for i := range keyTable {
		names = append(names, keyTable[i].Name)
		names = append(names, keyTable[i].Aliases...)
	}
	return suggestpkg.Closest(strings.ToUpper(name), names)
}
