package analyze

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The cue checks run their patterns only behind literal prefilters. These
// tests hold them to the checks they replaced (kept here as the reference):
// same answer on every line.

// errorLineRef is errorLine as it was before the prefilters.
func errorLineRef(raw string) (string, bool) {
	l, ok := reportLine(raw)
	if !ok {
		return "", false
	}
	l = strings.TrimLeft(l, "⎿✕✖×•* ")
	if jsonErrorKey.MatchString(l) && !errorAny.MatchString(l) {
		return "", false
	}
	lower := strings.ToLower(l)
	switch {
	case errorStart.MatchString(lower):
		if i := strings.IndexAny(l, ":!"); i >= 0 && noErrorValue.MatchString(strings.TrimSpace(l[i+1:])) {
			return "", false
		}
	case fatalStart.MatchString(l), levelStart.MatchString(l), exception.MatchString(l),
		testFail.MatchString(l), errorAny.MatchString(l):
	default:
		return "", false
	}
	return clip(l, maxErrorText), true
}

// matchLimitRef is matchLimit as it was before the prefilters.
func matchLimitRef(line string) (kind string, ok bool) {
	l := strings.ToLower(strings.TrimSpace(line))
	if len(l) < 10 {
		return "", false
	}
	return limitKind(strings.ReplaceAll(l, "’", "'"))
}

// The keyword gates of ownLine as they were: substring searches on an ASCII
// lower-cased copy.
var (
	errorWordsRef = []string{"err", "fatal", "exception", "fail", "panic", "traceback", "segmentation", "not found", "caused by"}
	limitWordsRef = []string{"limit", "usage", "quota", "429", "resource_exhausted"}
)

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func hasAnyRef(l string, words []string) bool {
	low := asciiLower(l)
	for _, w := range words {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

func checkCueLine(t *testing.T, l string) {
	t.Helper()
	m := hotWords.mask(l)
	if got, want := m&errorKw != 0, hasAnyRef(l, errorWordsRef); got != want {
		t.Errorf("error gate %q: %v, was %v", l, got, want)
	}
	if got, want := m&limitKw != 0, hasAnyRef(l, limitWordsRef); got != want {
		t.Errorf("limit gate %q: %v, was %v", l, got, want)
	}
	for k, w := range hotWords.words {
		if got, want := m&(1<<k) != 0, strings.Contains(asciiLower(l), w); got != want {
			t.Errorf("word %q in %q: %v, want %v", w, l, got, want)
		}
	}
	jsonKey, anyLit, quota := literalsRef(l)
	if got := [3]bool{m&litJSONKey != 0, m&litErrorAny != 0, m&litQuota != 0}; got != [3]bool{jsonKey, anyLit, quota} {
		t.Errorf("literals of %q: %v, want %v", l, got, [3]bool{jsonKey, anyLit, quota})
	}
	if got, want := m&litNonASCII != 0, strings.ContainsFunc(l, func(r rune) bool { return r >= 0x80 }); got != want {
		t.Errorf("non-ASCII %q: %v, want %v", l, got, want)
	}
	e1, ok1 := errorLine(l)
	e2, ok2 := errorLineRef(l)
	if e1 != e2 || ok1 != ok2 {
		t.Errorf("errorLine(%q) = %q %v, was %q %v", l, e1, ok1, e2, ok2)
	}
	k1, ok1 := matchLimit(l)
	k2, ok2 := matchLimitRef(l)
	if k1 != k2 || ok1 != ok2 {
		t.Errorf("matchLimit(%q) = %q %v, was %q %v", l, k1, ok1, k2, ok2)
	}
}

// literalsRef finds the literals the keyword pass reports (litAt) with
// plain substring searches: the keys jsonErrorKey cannot match without, the
// literals of errorAny, and the quota phrases of the limit patterns.
func literalsRef(l string) (jsonKey, anyLit, quota bool) {
	for off := 0; ; {
		j := strings.Index(l[off:], "error")
		if j < 0 {
			break
		}
		i := off + j
		before := l[:i]
		if strings.HasSuffix(before, `"`) || strings.HasSuffix(before, `"is_`) || strings.HasSuffix(before, `"has_`) {
			jsonKey = true
		}
		if strings.HasSuffix(before, "]: ") || strings.HasSuffix(before, "Link: ") || strings.HasSuffix(before, "failed with ") || strings.HasPrefix(l[i+5:], " TS") {
			anyLit = true
		}
		off = i + 5
	}
	for _, lit := range []string{"npm ERR!", "Error occurred", "Segmentation fault", "command not found", "panic: ",
		"Fatal", "FATAL", "Exception: ", "Traceback (most recent call last)"} {
		anyLit = anyLit || strings.Contains(l, lit)
	}
	low := asciiLower(l)
	quota = strings.Contains(low, "exceeded your current quota") || strings.Contains(low, "quota exceeded")
	return jsonKey, anyLit, quota
}

// Every word and literal is found wherever it stands in a line, in any
// case: at the start, the end, odd and even positions, around the pass's
// eight-byte steps.
func TestWordSetPositions(t *testing.T) {
	words := append(append([]string{}, hotWords.words...), "npm ERR!", "Error occurred", "Segmentation fault",
		"command not found", "panic: ", "Fatal", "FATAL", "Exception: ", "Traceback (most recent call last)",
		`"error"`, `"is_error"`, `"has_errors"`, "]: error", "Link: error", "failed with error", "error TS",
		"exceeded your current quota", "QUOTA EXCEEDED", "é")
	for _, w := range words {
		for _, v := range []string{w, strings.ToUpper(w), strings.ToLower(w)} {
			for pre := 0; pre < 20; pre++ {
				for post := 0; post < 20; post++ {
					checkCueLine(t, strings.Repeat("x", pre)+v+strings.Repeat("y", post))
					checkCueLine(t, strings.Repeat("e", pre)+v+strings.Repeat("r", post))
				}
			}
		}
	}
}

// cueFragments are pieces of error reports, limit messages, their
// look-alikes and ordinary prose, joined at random into test lines.
var cueFragments = []string{
	"Error:", "ERROR:", "error:", "error", "Error", "errors", "error[E0308]:", "error 404:", "error TS2304:", "error !",
	"src/main.go:12:3:", "a.go:1:", "fatal", "Fatal:", "FATAL", "fatal error:", "api error:", "build error:",
	"[ERROR]", "[FATAL]", "level=error", "E1234 ", "java.lang.NullPointerException", "TypeError:", "Exception in thread",
	"Caused by: ", "--- FAIL: TestX", "FAIL\t", "FAILED", "✗ ", "✕ ", "]: error", "failed with error", "Segmentation fault",
	"command not found", "npm ERR!", "npm", "ERR!", "panic: ", "Traceback (most recent call last)", `"is_error": false`,
	`"error": null`, `"has_errors":`, `"error_count": 0`, "none", "0", "n/a", ":", "!", " ", "  ", "\t", "-", "- ", "+", "#", ">",
	"//", "{", "⎿", "•", "*", "’", "\u212a", "İ", "K", "usage limit reached", "Claude AI usage limit reached|1763600000",
	"You've hit your limit · resets 4:50am (Europe/Rome)", "You’ve hit your 5-hour limit", "you're out of extra usage",
	"5-hour limit reached ∙ resets 9pm", "weekly limit reached", "WEEKLY LIMIT REACHED", "session limit hit",
	"API Error: Request rejected (429)", "api error: 429", "RESOURCE_EXHAUSTED", "exceeded your current quota",
	"quota exceeded", "claude:", "codex :", "gemini: ", "[", "limit", "usage", "quota", "429", "the rate limiter",
	"I will limit the search", "not found", "caused by", "exception", "the error handling", "fail", "failing test",
	"The build passes.", "Let me check the logs.", "Link: error LNK2019", "Error occurred", "Unhandled exception.",
	"uncaught exception:", "PHP Fatal error:", "IOException: ", "Exception", "done", "`code`", "**bold**", "http.Error(w, err.Error(), 400)",
}

func TestCuePrefiltersMatchReference(t *testing.T) {
	var lines []string
	lines = append(lines, proseSentences...)
	lines = append(lines, proseCode...)
	lines = append(lines, cueFragments...)
	r := uint64(7)
	for range 2000 {
		lines = append(lines, strings.Split(proseMessage(&r), "\n")...)
	}
	// Every line of the test data: transcripts, samples, real fixtures.
	for _, glob := range []string{"testdata/*/*", "testdata/*/*/*"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			for l := range strings.Lines(string(b)) {
				lines = append(lines, strings.TrimSuffix(l, "\n"))
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 30000 {
		var b strings.Builder
		for n := 1 + rng.IntN(6); n > 0; n-- {
			b.WriteString(cueFragments[rng.IntN(len(cueFragments))])
			if rng.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		lines = append(lines, b.String())
	}
	for _, l := range lines {
		checkCueLine(t, l)
	}
}

func FuzzCuePrefilters(f *testing.F) {
	for _, s := range cueFragments {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if len(l) > 4096 { // lines are short; long ones only slow the search down
			t.Skip()
		}
		checkCueLine(t, l)
	})
}

// The patterns the prefilters stand guard over are the ones listed in them:
// a new alternative in a pattern must come with its literal.
func TestPrefilterPatternsUnchanged(t *testing.T) {
	for re, want := range map[*regexp.Regexp]string{
		errorAny:     `\]: error\b|\bLink: error\b|\bError occurred\b|\bfailed with error\b|\bFatal\b|\bFATAL\b|\b[A-Z]\w*Exception: |\berror TS\d+:|\bSegmentation fault\b|\bcommand not found\b|\bnpm ERR!|\bpanic: |\bTraceback \(most recent call last\)`,
		exception:    `^(?:[\w.$]+\.)?(?:[A-Z]\w*(?:Exception|Error)|Exception)\b(?::|\s*$| in | at )|^Exception in thread\b|^Caused by: |^(?i:unhandled|uncaught) exception\b`,
		jsonErrorKey: `"(?:is_error|error|errors|error_count|has_errors?|error_message|errorCount)"\s*:`,
		errorStart:   `^(?:\S+:\d+(?::\d+)?:\s*)?(?:api |fatal |uncaught |unhandled |runtime |syntax |type |build |compile |compilation )?error(?:\[[\w-]+\]| TS\d+| \d{3})?\s*[:!]`,
		limitPrefix:  `^(?:[⎿✕✖×•*>\s\[]+)?(?:(?:error|fatal|claude|codex|gemini)\s*:\s*)?`,
	} {
		if re.String() != want {
			t.Errorf("pattern changed: %s\nupdate its prefilter (errors.go, limits.go) and this test", re)
		}
	}
	var b bytes.Buffer
	for _, p := range limitLines {
		b.WriteString(p.re.String() + "\n")
	}
	if want := "^(?:claude(?: ai)? )?usage limit reached\\b\n" +
		"^you've (?:hit|reached|exceeded) your (?:(5-hour|five-hour|5h|weekly|7-day|session|opus|sonnet|daily|monthly|usage) )?(?:usage )?limit\\b\n" +
		"^you're out of (?:extra |included )?usage\\b\n" +
		"^(5-hour|five-hour|weekly|7-day|session|opus|sonnet|daily) (?:usage )?limit (?:reached|hit|exceeded)\\b\n" +
		"^api error: (?:request rejected \\(429\\)|429\\b)\n" +
		"resource_exhausted|exceeded your current quota|\\bquota exceeded\\b\n"; b.String() != want {
		t.Errorf("limit patterns changed:\n%s\nupdate limitStarts and this test", b.String())
	}
}
