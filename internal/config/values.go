package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"ralph/internal/shellwords"
)

// parse turns a key's text into the Go value its field holds (string, bool,
// int64, float64, time.Duration or []string), or says what is wrong with it.
// The problem is phrased to follow "KEY: ", e.g. `"abc" is not a whole number`.
func (k *keyInfo) parse(raw string) (any, string) {
	v := raw
	if k.kind != kString && k.kind != kList {
		// Quoted numbers with stray spaces are harmless; keep text as written.
		v = strings.TrimSpace(raw)
	}
	switch k.kind {
	case kString:
		if k.check != nil && v != "" {
			if p := k.check(v); p != "" {
				return nil, p
			}
		}
		return v, ""
	case kCommand:
		if _, err := shellwords.Split(v); err != nil {
			return nil, fmt.Sprintf("%v in %q", err, v)
		}
		return v, ""
	case kEnum:
		low := strings.ToLower(v)
		if !slices.Contains(k.Values, low) {
			return nil, fmt.Sprintf("%q is not one of: %s", v, strings.Join(k.Values, ", "))
		}
		return low, ""
	case kBool:
		b, ok := parseBool(v)
		if !ok {
			return nil, fmt.Sprintf("%q is not true or false", v)
		}
		return b, ""
	case kInt:
		return k.whole(v, 1, "")
	case kMinutes:
		return k.whole(v, time.Minute, " of minutes")
	case kHours:
		return k.whole(v, time.Hour, " of hours")
	case kSeconds:
		return k.whole(v, time.Second, " of seconds")
	case kDuration:
		return parseDuration(v)
	case kFloat:
		return parseMoney(v)
	case kList:
		items, err := SplitList(v)
		if err != nil {
			return nil, fmt.Sprintf("%v in %q", err, v)
		}
		if k.check != nil && v != "" {
			if p := k.check(v); p != "" {
				return nil, p
			}
		}
		return items, ""
	}
	return nil, "cannot be set (it has no effect in ralph)"
}

// whole parses a whole number within the key's bounds. unit 1 yields an
// int64; any other unit yields that many units as a time.Duration.
func (k *keyInfo) whole(v string, unit time.Duration, what string) (any, string) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && unit != 1 {
		// A duration with its unit says what it means whatever the key's
		// unit is: --timeout 90s, SESSION_EXPIRY_HOURS=30m. A bare number
		// keeps the bash tool's unit.
		if d, derr := time.ParseDuration(v); derr == nil {
			if d < time.Duration(k.min)*unit {
				return nil, fmt.Sprintf("%q must be at least %s", v, time.Duration(k.min)*unit)
			}
			return d, ""
		}
	}
	switch {
	case errors.Is(err, strconv.ErrRange):
		return nil, fmt.Sprintf("%q is too large", v)
	case err != nil:
		return nil, fmt.Sprintf("%q is not a whole number%s", v, what)
	case k.max > 0 && (n < k.min || n > k.max):
		return nil, fmt.Sprintf("%q is out of range (%d to %d)", v, k.min, k.max)
	case n < k.min:
		return nil, fmt.Sprintf("%q must be at least %d", v, k.min)
	}
	if unit == 1 {
		if n > math.MaxInt { // the field is an int
			return nil, fmt.Sprintf("%q is too large", v)
		}
		return n, ""
	}
	if n > math.MaxInt64/int64(unit) {
		return nil, fmt.Sprintf("%q is too large", v)
	}
	return time.Duration(n) * unit, ""
}

// parseBool accepts the spellings people write in shell config files. The
// bash tool compared against "true" only; anything else silently meant false,
// which is exactly the mistake an error here catches.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// parseDuration reads a Go duration; a bare whole number means seconds, as
// with sleep(1).
func parseDuration(v string) (any, string) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return nil, fmt.Sprintf("%q must not be negative", v)
		}
		if n > math.MaxInt64/int64(time.Second) {
			return nil, fmt.Sprintf("%q is too large", v)
		}
		return time.Duration(n) * time.Second, ""
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return nil, fmt.Sprintf("%q is not a duration (like 30s, 5m or 1h30m)", v)
	}
	if d < 0 {
		return nil, fmt.Sprintf("%q must not be negative", v)
	}
	return d, ""
}

// parseMoney reads a non-negative decimal; a leading "$" is allowed because
// people write amounts that way.
func parseMoney(v string) (any, string) {
	f, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Sprintf("%q is not a number", v)
	}
	if f < 0 {
		return nil, fmt.Sprintf("%q must not be negative", v)
	}
	return f, ""
}

// SplitList splits a comma-separated list, trimming spaces and dropping empty
// items. Commas inside parentheses do not split, so a tool pattern such as
// "Bash(git log --format=%h,%s)" stays one item. Unbalanced parentheses are an
// error: the agent would reject the pattern anyway, and late.
func SplitList(s string) ([]string, error) {
	items := []string{}
	depth, start := 0, 0
	flush := func(end int) {
		if item := strings.TrimSpace(s[start:end]); item != "" {
			items = append(items, item)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return nil, errors.New("unbalanced ')'")
			}
			depth--
		case ',':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced '('")
	}
	flush(len(s))
	return items, nil
}

var (
	versionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)
	memoryRE  = regexp.MustCompile(`^[0-9]+[bkmgBKMG]?$`)
	cpusRE    = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

// checkRE builds a kString check from a pattern and a description of it.
func checkRE(re *regexp.Regexp, want string) func(string) string {
	return func(v string) string {
		if !re.MatchString(v) {
			return fmt.Sprintf("%q is not %s", v, want)
		}
		return ""
	}
}
