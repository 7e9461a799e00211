package analyze

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Error lines, by the two-stage rule: a line must first look like an error
// report (a leading "Error:", "fatal", an exception, "]: error", "failed with
// error"…), then must not be one of the look-alikes: JSON keys such as
// "is_error": false, diff lines, headings and prose about error handling.
var (
	errorStart = regexp.MustCompile(`^(?:\S+:\d+(?::\d+)?:\s*)?(?:api |fatal |uncaught |unhandled |runtime |syntax |type |build |compile |compilation )?error(?:\[[\w-]+\]| TS\d+| \d{3})?\s*[:!]`)
	// errorAny holds, anywhere in a line, the bash tool's "]: error", "Link:
	// error", "Error occurred", "failed with error", "Fatal", "FATAL" and a
	// named exception ("java.io.IOException: "), and ralph's own additions.
	errorAny   = regexp.MustCompile(`\]: error\b|\bLink: error\b|\bError occurred\b|\bfailed with error\b|\bFatal\b|\bFATAL\b|\b[A-Z]\w*Exception: |\berror TS\d+:|\bSegmentation fault\b|\bcommand not found\b|\bnpm ERR!|\bpanic: |\bTraceback \(most recent call last\)`)
	fatalStart = regexp.MustCompile(`^(?:fatal|FATAL|Fatal)\b`)
	levelStart = regexp.MustCompile(`^(?:\[(?:ERROR|FATAL)\]|(?:ERROR|FATAL)\b|level=error\b|E\d{4} )`)
	exception  = regexp.MustCompile(`^(?:[\w.$]+\.)?(?:[A-Z]\w*(?:Exception|Error)|Exception)\b(?::|\s*$| in | at )|^Exception in thread\b|^Caused by: |^(?i:unhandled|uncaught) exception\b`)
	testFail   = regexp.MustCompile(`^(?:--- FAIL: |FAIL\s|FAILED\b|✗ |✕ )`)
	// Values that say "no error".
	noErrorValue = regexp.MustCompile(`(?i)^(?:none|null|nil|false|0|n/a|no errors?|-)\.?$`)
	jsonErrorKey = regexp.MustCompile(`"(?:is_error|error|errors|error_count|has_errors?|error_message|errorCount)"\s*:`)
)

// errorLine reports whether a line of the agent's output reports an error,
// and returns it trimmed.
func errorLine(raw string) (string, bool) { return errorLineMask(raw, hotWords.mask(raw)) }

// reportLine is raw trimmed, and false when it is too short to report an
// error or is code: diff lines and quoted material. A list item's dash is
// cut off.
func reportLine(raw string) (string, bool) {
	l := strings.TrimSpace(raw)
	if len(l) < 4 {
		return "", false
	}
	switch l[0] {
	case '+', '#', '>', '|', '{', '"':
		return "", false
	case '/':
		if strings.HasPrefix(l, "//") {
			return "", false
		}
	case '-':
		if !strings.HasPrefix(l, "--- FAIL") && (len(l) < 2 || l[1] != ' ' || strings.HasPrefix(l, "-  ")) {
			return "", false
		}
		l = strings.TrimSpace(strings.TrimPrefix(l, "- "))
	}
	return l, true
}

// errorLineMask is errorLine given the line's hotWords mask.
func errorLineMask(raw string, m uint32) (string, bool) {
	l, ok := reportLine(raw)
	if !ok {
		return "", false
	}
	if l != "" && (l[0] == '*' || l[0] == ' ' || l[0] >= 0x80) { // the cutset's first bytes
		l = strings.TrimLeft(l, "⎿✕✖×•* ")
	}
	// Each pattern runs only when a literal it cannot match without is
	// there: most lines of prose that say "error" match none, and a regexp
	// over a long line costs far more than a few substring searches. The
	// keyword pass found the literals of jsonErrorKey and errorAny (litAt):
	// they hold no byte the trimming above takes away, so the raw line and
	// l hold the same ones.
	jsonKeyMay, anyMay := m&litJSONKey != 0, m&litErrorAny != 0
	if jsonKeyMay && jsonErrorKey.MatchString(l) && !(anyMay && errorAny.MatchString(l)) {
		return "", false
	}
	switch {
	case m&kwErr != 0 && mayErrorStart(l) && errorStart.MatchString(strings.ToLower(l)):
		// "Error: none", "Errors: 0" are statements of success.
		if i := strings.IndexAny(l, ":!"); i >= 0 && noErrorValue.MatchString(strings.TrimSpace(l[i+1:])) {
			return "", false
		}
	case hasPrefixAny(l, "fatal", "FATAL", "Fatal") && fatalStart.MatchString(l),
		mayLevelStart(l) && levelStart.MatchString(l),
		mayException(l) && exception.MatchString(l),
		hasPrefixAny(l, "--- FAIL: ", "FAIL", "✗ ", "✕ ") && testFail.MatchString(l),
		anyMay && errorAny.MatchString(l):
	default:
		return "", false
	}
	return clip(l, maxErrorText), true
}

// The prefilters below are necessary conditions of the patterns above: when
// one is false its pattern cannot match, when true the pattern decides.

func hasPrefixAny(l string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

func containsAny(l string, subs ...string) bool {
	for _, s := range subs {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// mayLevelStart: the first bytes levelStart's alternatives can start with.
func mayLevelStart(l string) bool {
	if l == "" {
		return false
	}
	switch l[0] {
	case '[', 'E', 'F', 'l':
		return true
	}
	return false
}

// mayException: exception's class name ends the line's first run of [\w.$]
// characters ("Exception in thread", "Caused by: ", "Unhandled exception"
// begin lines).
func mayException(l string) bool {
	end := 0
	for end < len(l) {
		ch := l[end]
		if ch == '_' || ch == '.' || ch == '$' || ('0' <= ch && ch <= '9') || ('a' <= ch && ch <= 'z') || ('A' <= ch && ch <= 'Z') {
			end++
			continue
		}
		break
	}
	if strings.HasPrefix(l, "Caused by: ") || hasLowerPrefix(l, "unhandled exception") || hasLowerPrefix(l, "uncaught exception") {
		return true
	}
	// The name ends the run, followed by ":", a space or the end.
	if end < len(l) && !isRESpace(l[end]) && l[end] != ':' {
		return false
	}
	tok := l[:end]
	return strings.HasSuffix(tok, "Exception") || strings.HasSuffix(tok, "Error")
}

// mayErrorStart: errorStart (on the lower-cased line) needs "error" in any
// case, then optionally "[…]" or " " and three digits, then \s* and ":" or
// "!". Each ":" or "!" is looked at from behind. Lower-casing creates no
// ASCII letter but "k" and "i", so ASCII case folding finds the same words.
func mayErrorStart(l string) bool {
	for _, c := range [...]byte{':', '!'} {
		for off := 0; ; {
			j := strings.IndexByte(l[off:], c)
			if j < 0 {
				break
			}
			p := off + j
			for p > 0 && isRESpace(l[p-1]) {
				p--
			}
			switch {
			case p > 0 && l[p-1] == ']':
				return true // perhaps "error[E0308]": the pattern judges
			case hasLowerSuffix(l[:p], "error"):
				return true
			case p >= 4 && l[p-4] == ' ' && isDigit(l[p-3]) && isDigit(l[p-2]) && isDigit(l[p-1]) && hasLowerSuffix(l[:p-4], "error"):
				return true
			}
			off += j + 1
		}
	}
	return false
}

// isRESpace is regexp's \s.
func isRESpace(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\f', '\r':
		return true
	}
	return false
}

// hasLowerSuffix reports whether s ends with word (lower case) once its ASCII
// letters are lower-cased.
func hasLowerSuffix(s, word string) bool {
	return len(s) >= len(word) && hasLowerPrefix(s[len(s)-len(word):], word)
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// errorList collects distinct error lines, bounded.
type errorList struct {
	lines []string
	seen  map[string]bool
}

const maxErrors = 20

// full: no more lines are added, so none need be looked for.
func (e *errorList) full() bool { return len(e.lines) >= maxErrors }

func (e *errorList) add(l string) {
	if e.seen == nil {
		e.seen = map[string]bool{}
	}
	if e.seen[l] || len(e.lines) >= maxErrors {
		return
	}
	l = strings.Clone(l) // l may be a view of a message's text (textView)
	e.seen[l] = true
	e.lines = append(e.lines, l)
}

// Tests status from prose: the last line that says something wins.
var (
	testsFailing = regexp.MustCompile(`\b(?:tests? (?:are |is |were |was )?(?:still )?(?:failing|failed|fail)\b|[1-9]\d* (?:tests? )?(?:failed|failing|failures?)\b|failing tests?\b)|^(?:--- FAIL|FAIL\b|FAILED\b)`)
	testsNoFail  = regexp.MustCompile(`\b(?:no|0|zero) (?:tests? )?(?:failed|failing|failures?)\b|\bno failing tests\b`)
	testsPassing = regexp.MustCompile(`\b(?:all (?:\d+ )?(?:the )?(?:unit |integration |e2e )?tests? (?:now )?(?:pass|passed|passing|are passing|succeed|succeeded|green)|tests? (?:now )?(?:pass|passed|passing|are passing|succeed|succeeded|are green|green)|\d+ (?:tests? )?passed|\d+ passing)\b|^(?:ok\s+\S+|PASS)\b`)
)

func testsStatusOf(line string) string {
	l := strings.TrimSpace(line)
	low := strings.ToLower(l)
	if testsFailing.MatchString(low) || testsFailing.MatchString(l) {
		if !testsNoFail.MatchString(low) {
			return TestsFailing
		}
		return TestsPassing
	}
	if testsPassing.MatchString(low) || testsPassing.MatchString(l) {
		return TestsPassing
	}
	return ""
}

// Test runners and implementation cues, for telling a test-only iteration.
var (
	testCommand = regexp.MustCompile(`(?:^|[\s;&|('"])(?:npm (?:run )?test|npm t\b|yarn (?:run )?test|pnpm (?:run )?test|bun test|npx (?:jest|vitest|mocha|playwright test)|jest|vitest|mocha|pytest|python3? -m (?:pytest|unittest)|tox|go test|cargo (?:test|nextest)|bats|mvn(?:w)?(?: \S+)* (?:test|verify)|\./mvnw(?: \S+)* (?:test|verify)|gradle(?:w)?(?: \S+)* (?:test|check)|\./gradlew(?: \S+)* (?:test|check)|make (?:test|check)|rspec|bundle exec rspec|phpunit|dotnet test|mix test|ctest|deno test)\b|(?i)^running (?:the )?(?:unit |integration )?tests\b`)
	implCue     = regexp.MustCompile(`(?i)^(?:i )?(?:implementing|implemented|creating|created|writing|wrote|adding|added|modifying|modified|updating|updated|fixing|fixed|refactoring|refactored|editing|edited|changing|changed|renaming|renamed|removing|removed|deleting|deleted|rewriting|rewrote|migrating|migrated)\b`)
	shellWrites = regexp.MustCompile(`(?:^|[\s;&|])(?:sed -i|perl -pi|tee|touch|mkdir|cp|mv|rm|patch|git apply|git mv|git rm)\b|[^0-9&>]>{1,2}\s*[^&/\s]|^>{1,2}\s*[^&/\s]`)
)

func isTestCommand(s string) bool { return testCommand.MatchString(s) }

// Bounds of the texts kept from one message.
const (
	maxErrorText = 300
	maxLimitText = 500
)

// foldLines joins the non-blank lines of s into one line of at most max
// bytes (then marked "…").
func foldLines(s string, max int) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l)
		if b.Len() > max {
			break
		}
	}
	return clip(b.String(), max)
}

// clip cuts s to at most max bytes at a character boundary, marking the cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.TrimRight(s[:i], " ") + "…"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s, maxErrorText)
}
