package analyze

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // reset messages name zones ("Europe/Rome"); a static binary needs the database built in
)

// Usage-limit announcements, matched at the start of a line of the agent's
// own output (after error prefixes), so a sentence that merely mentions a
// limit in the middle of prose is not one.
var limitLines = []struct {
	re   *regexp.Regexp
	kind string // "" = read the kind from the first group
}{
	{regexp.MustCompile(`^(?:claude(?: ai)? )?usage limit reached\b`), LimitUnknown},
	{regexp.MustCompile(`^you've (?:hit|reached|exceeded) your (?:(5-hour|five-hour|5h|weekly|7-day|session|opus|sonnet|daily|monthly|usage) )?(?:usage )?limit\b`), ""},
	{regexp.MustCompile(`^you're out of (?:extra |included )?usage\b`), LimitUnknown},
	{regexp.MustCompile(`^(5-hour|five-hour|weekly|7-day|session|opus|sonnet|daily) (?:usage )?limit (?:reached|hit|exceeded)\b`), ""},
	{regexp.MustCompile(`^api error: (?:request rejected \(429\)|429\b)`), LimitUnknown},
	{regexp.MustCompile(`resource_exhausted|exceeded your current quota|\bquota exceeded\b`), LimitUnknown},
}

// limitPrefix strips what CLIs print before the message itself.
var limitPrefix = regexp.MustCompile(`^(?:[⎿✕✖×•*>\s\[]+)?(?:(?:error|fatal|claude|codex|gemini)\s*:\s*)?`)

// matchLimit reports whether a line announces a usage limit, and its kind.
func matchLimit(line string) (kind string, ok bool) { return matchLimitMask(line, hotWords.mask(line)) }

// matchLimitMask is matchLimit given the line's hotWords mask.
func matchLimitMask(line string, m uint32) (kind string, ok bool) {
	if m&(kwLimit|kwUsage|kwQuota|kw429|kwResourceExhausted) == 0 {
		return "", false // every pattern holds one of these words
	}
	if m&(litQuota|kwResourceExhausted) == 0 && !limitStartASCII(strings.TrimSpace(line)) && (m&litNonASCII == 0 || foldsLikeASCII(line)) {
		return "", false // mayLimit without lower-casing a copy
	}
	l := strings.ToLower(strings.TrimSpace(line))
	if len(l) < 10 {
		return "", false
	}
	l = strings.ReplaceAll(l, "’", "'")
	if !mayLimit(l) {
		return "", false
	}
	return limitKind(l)
}

// limitKind is the kind of limit a lower-cased line reports, by the first
// of limitLines it matches. The prefilter tests' reference reaches it
// without the gates, which are what they check.
func limitKind(l string) (kind string, ok bool) {
	l = limitPrefix.ReplaceAllString(l, "")
	for _, p := range limitLines {
		m := p.re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if p.kind != "" {
			return p.kind, true
		}
		return kindOf(m[1]), true
	}
	return "", false
}

// limitStarts are the words limitLines' anchored patterns start with.
var limitStarts = []string{"usage limit reached", "claude", "you've ", "you're out of ",
	"5-hour", "five-hour", "weekly", "7-day", "session", "opus", "sonnet", "daily", "api error: "}

// mayLimit is a necessary condition of limitLines on a lower-cased line:
// after what limitPrefix strips it starts with one of limitStarts, or it
// holds the last pattern's words. Most prose that mentions a limit or usage
// fails it without a regexp.
func mayLimit(l string) bool {
	if containsAny(l, "resource_exhausted", "exceeded your current quota", "quota exceeded") {
		return true
	}
	// limitPrefix: a run of [⎿✕✖×•*>\s\[], then perhaps "error:"-like words.
	rest := strings.TrimLeft(l, "⎿✕✖×•*> \t\n\f\r[")
	for _, w := range []string{"error", "fatal", "claude", "codex", "gemini"} {
		if after, ok := strings.CutPrefix(rest, w); ok {
			if t := strings.TrimLeft(after, " \t\n\f\r"); strings.HasPrefix(t, ":") {
				rest = strings.TrimLeft(t[1:], " \t\n\f\r")
			}
			break
		}
	}
	return hasPrefixAny(rest, limitStarts...)
}

// limitStartASCII is mayLimit's test of the line's start, on a line that
// folds like ASCII (foldsLikeASCII), not yet lower-cased (so for lines without
// "resource_exhausted" and the quota phrases, which the keyword pass finds in
// any ASCII case: litQuota).
func limitStartASCII(l string) bool {
	rest := strings.TrimLeft(l, "*> \t\n\f\r[")
	for _, w := range []string{"error", "fatal", "claude", "codex", "gemini"} {
		if hasLowerPrefix(rest, w) {
			if t := strings.TrimLeft(rest[len(w):], " \t\n\f\r"); strings.HasPrefix(t, ":") {
				rest = strings.TrimLeft(t[1:], " \t\n\f\r")
			}
			break
		}
	}
	for _, w := range limitStarts {
		if hasLowerPrefix(rest, w) {
			return true
		}
	}
	return false
}

// foldsLikeASCII reports whether lower-casing s and replacing ’ changes
// nothing mayLimit looks at beyond ASCII letters: no Kelvin sign or dotted
// capital I (which lower-case to ASCII letters), no ’, and none of the
// runes limitPrefix strips. Their UTF-8 lead bytes are E2, C4 and C3.
func foldsLikeASCII(s string) bool {
	return strings.IndexByte(s, 0xE2) < 0 && strings.IndexByte(s, 0xC4) < 0 && strings.IndexByte(s, 0xC3) < 0
}

func kindOf(word string) string {
	switch strings.ToLower(word) {
	case "5-hour", "five-hour", "5h", "five_hour":
		return LimitFiveHour
	case "weekly", "7-day", "seven_day", "seven_day_opus", "seven_day_sonnet", "opus", "sonnet":
		return LimitWeekly
	case "session":
		return LimitSession
	}
	return LimitUnknown
}

var (
	epochSuffix = regexp.MustCompile(`\|\s*(\d{9,11})\b`)
	// "resets 9pm", "resets 4:50am (Europe/Rome)", "resets Nov 23, 11:01pm (UTC)",
	// "try again at Nov 21st, 2026 1:05 AM".
	absoluteReset = regexp.MustCompile(`(?i)(?:resets?|try again|available again|retry)\s+(?:at\s+|on\s+|after\s+)?((?:[a-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+(?:\d{4},?\s+)?(?:at\s+)?)?\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?)(?:\s*\(([^)]+)\))?`)
	relativeReset = regexp.MustCompile(`(?i)(?:resets?|try again|retry|available again|please retry)\s+in\s+((?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)`)
	retryDelay    = regexp.MustCompile(`"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"`)
	clockExpr     = regexp.MustCompile(`^(?:([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(?:(\d{4}),?\s*)?(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(?:([ap])\.?m?\.?)?$`)
	durationPart  = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
)

// parseReset finds the reset instant in a limit message. zoneNote is set
// when the message named a zone ralph does not know (UTC is then assumed).
func parseReset(msg string, now time.Time) (t time.Time, ok bool, zoneNote string) {
	if m := epochSuffix.FindStringSubmatch(msg); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return time.Unix(sec, 0).UTC(), true, ""
		}
	}
	if now.IsZero() {
		return time.Time{}, false, ""
	}
	if m := absoluteReset.FindStringSubmatch(msg); m != nil {
		loc, note := zone(m[2])
		if t, ok := resolveClock(strings.ToLower(strings.TrimSpace(m[1])), loc, now); ok {
			return t.UTC(), true, note
		}
	}
	if m := relativeReset.FindStringSubmatch(msg); m != nil {
		if d := parseDurationWords(m[1]); d > 0 {
			return now.Add(d).UTC().Truncate(time.Second), true, ""
		}
	}
	if m := retryDelay.FindStringSubmatch(msg); m != nil {
		if f, err := strconv.ParseFloat(m[1], 64); err == nil && f > 0 {
			return now.Add(time.Duration(f * float64(time.Second))).UTC().Truncate(time.Second), true, ""
		}
	}
	return time.Time{}, false, ""
}

var zoneAbbrev = map[string]string{
	"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles", "PT": "America/Los_Angeles",
	"EST": "America/New_York", "EDT": "America/New_York", "ET": "America/New_York",
	"CST": "America/Chicago", "CDT": "America/Chicago", "MST": "America/Denver", "MDT": "America/Denver",
	"CET": "Europe/Paris", "CEST": "Europe/Paris", "BST": "Europe/London", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
}

var offsetZone = regexp.MustCompile(`^(?:UTC|GMT)\s*([+-])(\d{1,2})(?::?(\d{2}))?$`)

func zone(name string) (*time.Location, string) {
	name = strings.TrimSpace(name)
	switch strings.ToUpper(name) {
	case "", "UTC", "GMT", "Z":
		return time.UTC, ""
	}
	if m := offsetZone.FindStringSubmatch(strings.ToUpper(name)); m != nil {
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3] + "0")
		if m[3] != "" {
			mi, _ = strconv.Atoi(m[3])
		}
		off := h*3600 + mi*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(name, off), ""
	}
	if iana, ok := zoneAbbrev[strings.ToUpper(name)]; ok {
		name = iana
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc, ""
	}
	return time.UTC, "unknown time zone " + strconv.Quote(name) + " in the reset time; UTC assumed"
}

var months = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

// resolveClock turns "9pm", "4:50am", "nov 23, 11:01pm" or "nov 21st, 2026
// 1:05 am" into the next such instant at or after now (a date without a year
// is this year's unless that is long past).
func resolveClock(expr string, loc *time.Location, now time.Time) (time.Time, bool) {
	m := clockExpr.FindStringSubmatch(expr)
	if m == nil {
		return time.Time{}, false
	}
	h, _ := strconv.Atoi(m[4])
	mi := 0
	if m[5] != "" {
		mi, _ = strconv.Atoi(m[5])
	}
	switch m[6] {
	case "a":
		if h == 12 {
			h = 0
		}
	case "p":
		if h != 12 {
			h += 12
		}
	default:
		if m[5] == "" { // a bare number is not a time
			return time.Time{}, false
		}
	}
	if h > 23 || mi > 59 || (m[6] != "" && (h > 23)) {
		return time.Time{}, false
	}
	local := now.In(loc)
	if m[1] == "" {
		t := time.Date(local.Year(), local.Month(), local.Day(), h, mi, 0, 0, loc)
		if !t.After(now) {
			t = time.Date(local.Year(), local.Month(), local.Day()+1, h, mi, 0, 0, loc)
		}
		return t, true
	}
	if len(m[1]) < 3 {
		return time.Time{}, false
	}
	mon, ok := months[m[1][:3]]
	if !ok {
		return time.Time{}, false
	}
	day, _ := strconv.Atoi(m[2])
	if day < 1 || day > 31 {
		return time.Time{}, false
	}
	if m[3] != "" {
		y, _ := strconv.Atoi(m[3])
		return time.Date(y, mon, day, h, mi, 0, 0, loc), true
	}
	t := time.Date(local.Year(), mon, day, h, mi, 0, 0, loc)
	if t.Before(now.AddDate(0, 0, -30)) {
		t = t.AddDate(1, 0, 0)
	}
	return t, true
}

func parseDurationWords(s string) time.Duration {
	var d time.Duration
	for _, m := range durationPart.FindAllStringSubmatch(s, -1) {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		unit := time.Second
		switch u := strings.ToLower(m[2]); {
		case strings.HasPrefix(u, "d"):
			unit = 24 * time.Hour
		case strings.HasPrefix(u, "h"):
			unit = time.Hour
		case strings.HasPrefix(u, "m"):
			unit = time.Minute
		}
		d += time.Duration(f * float64(unit))
	}
	return d
}
