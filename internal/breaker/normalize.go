package breaker

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The patterns run on lower-cased text, in the order listed in
// NormalizeError. Each replacement contains no digit and no character a later
// pattern (or a second pass) could match differently, which is what makes
// the normaliser idempotent.
var (
	// CSI (colours, cursor moves) and OSC (titles, links) escape sequences.
	ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)
	// ISO-like timestamps, with or without seconds, fraction and zone.
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?`)
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// The component right after a temporary directory is random (mktemp,
	// go-build, pytest-of-x/pytest-12): only the root is kept.
	tempRE = regexp.MustCompile(`((?:/private)?/var/folders/[^\s/]+/[^\s/]+/t/|/(?:var/)?tmp/|\\temp\\)[^\s/\\:'"()\[\]]+`)
	// 0x-prefixed numbers and words of six or more hex digits with at least
	// one digit among them (commit ids, object ids); plain words such as
	// "facade" have no digit and are left alone.
	hexRE = regexp.MustCompile(`\b(?:0x[0-9a-f]+|[0-9a-f]{6,})\b`)
	// Numbers, including 1.5, 12:03 and 1,000.
	numRE = regexp.MustCompile(`\p{Nd}+(?:[.,:]\p{Nd}+)*`)
	// A number with a duration or size unit glued on: "#ms" and "#s" must
	// not differ just because one run was faster.
	unitRE  = regexp.MustCompile(`#(?:ns|us|µs|ms|s|m|h|kb|mb|gb|b)\b`)
	hashRun = regexp.MustCompile(`#{2,}`)
)

// NormalizeError reduces one error line to what stays the same when the same
// failure happens again: invalid UTF-8, escape sequences and control
// characters become spaces; the text is lower-cased; timestamps, UUIDs, hex
// ids and numbers (line numbers, durations, ports, counts) become "#";
// random temporary path components become "*"; runs of white space become
// one space. The result of a blank line is "".
func NormalizeError(line string) string {
	s := strings.ToValidUTF8(line, "\uFFFD")
	if strings.Contains(s, "\x1b") {
		s = ansiRE.ReplaceAllLiteralString(s, " ")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.ToLower(s)
	s = timeRE.ReplaceAllLiteralString(s, "#")
	s = uuidRE.ReplaceAllLiteralString(s, "#")
	s = tempRE.ReplaceAllString(s, "${1}*")
	s = hexRE.ReplaceAllStringFunc(s, func(w string) string {
		if strings.ContainsAny(w, "0123456789") {
			return "#"
		}
		return w
	})
	s = numRE.ReplaceAllLiteralString(s, "#")
	s = unitRE.ReplaceAllLiteralString(s, "#")
	s = hashRun.ReplaceAllLiteralString(s, "#")
	return strings.Join(strings.Fields(s), " ")
}

// Signature identifies a set of error lines: each is normalised, blanks are
// dropped, the rest de-duplicated and sorted, so neither the order the agent
// printed them in nor repeats matter. It returns "" when no line is left,
// and the normalised lines. The signature is a short hash so the state file
// stays small however long the errors are.
func Signature(lines []string) (string, []string) {
	var norm []string
	for _, l := range lines {
		if n := NormalizeError(l); n != "" {
			norm = append(norm, n)
		}
	}
	if len(norm) == 0 {
		return "", nil
	}
	slices.Sort(norm)
	norm = slices.Compact(norm)
	sum := sha256.Sum256([]byte(strings.Join(norm, "\n")))
	return hex.EncodeToString(sum[:8]), norm
}
