package analyze

import (
	"regexp"
	"strconv"
	"strings"
)

// The status block's values, read as the analyzer reads them: numbers,
// booleans and words as agents spell them, the questions and the review
// threads an agent names.

func setInt(f map[string]string, dst *int, keys ...string) {
	for _, k := range keys {
		if n, ok := leadingInt(f[k]); ok {
			*dst = n
			return
		}
	}
}

var leadingIntRE = regexp.MustCompile(`^\s*(\d{1,9})\b`)

func leadingInt(s string) (int, bool) {
	m := leadingIntRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'.`)) {
	case "true", "yes", "1", "y":
		return true, true
	case "false", "no", "0", "n":
		return false, true
	}
	return false, false
}

func normWord(v string) string {
	v = strings.ToUpper(strings.Trim(strings.TrimSpace(v), `"'.`))
	return wordJoiner.Replace(v)
}

var wordJoiner = strings.NewReplacer(" ", "_", "-", "_")

func normStatus(v string) string {
	switch normWord(v) {
	case "IN_PROGRESS", "INPROGRESS", "WORKING", "CONTINUING", "ONGOING", "PARTIAL", "CONTINUE":
		return StatusInProgress
	case "COMPLETE", "COMPLETED", "DONE", "FINISHED", "SUCCESS":
		return StatusComplete
	case "BLOCKED", "STUCK":
		return StatusBlocked
	case "NEEDS_CLARIFICATION", "CLARIFICATION_NEEDED", "NEEDS_INPUT", "QUESTION", "QUESTIONS":
		return StatusNeedsClarification
	}
	return StatusUnknown
}

func normTests(v string) string {
	if s := testsWord(normWord(v)); s != TestsUnknown {
		return s
	}
	// "FAIL (2 of 40)": the first word says it.
	if f := strings.Fields(v); len(f) > 1 {
		return testsWord(normWord(strings.Trim(f[0], ".,;:!()[]`*_")))
	}
	return TestsUnknown
}

// TestsValue reads a TESTS_STATUS value as the analyzer does, for
// records kept before the analysis was (loop.Metrics.Typed).
func TestsValue(v string) string { return normTests(v) }

// BoolOf reads a status block's true/false value as the analyzer does; ok
// is false for a value that is neither.
func BoolOf(v string) (b, ok bool) { return parseBool(v) }

func testsWord(w string) string {
	switch w {
	case "PASSING", "PASS", "PASSED", "GREEN", "OK", "SUCCESS":
		return TestsPassing
	case "FAILING", "FAIL", "FAILED", "RED", "FAILURE":
		return TestsFailing
	case "NOT_RUN", "NOTRUN", "SKIPPED", "NONE", "N/A", "NA", "NOT_APPLICABLE":
		return TestsNotRun
	}
	return TestsUnknown
}

var listItem = regexp.MustCompile(`^\s*(?:[-*•]|\d+[.)])\s+`)

// splitQuestions reads CLARIFICATION_QUESTIONS: one question per line or list
// item; a single line may hold several separated by " | ".
func splitQuestions(v string) []string {
	out := []string{}
	for _, l := range strings.Split(v, "\n") {
		l = strings.TrimSpace(listItem.ReplaceAllString(l, ""))
		for _, q := range strings.Split(l, " | ") {
			if q = strings.TrimSpace(q); q != "" && !strings.EqualFold(q, "none") && q != "[]" {
				out = append(out, q)
			}
		}
	}
	return out
}

// ThreadsAddressedField is the request prompt's status-block field where
// the agent names the review threads it addressed in a follow-up round.
const ThreadsAddressedField = "REVIEW_THREADS_ADDRESSED"

var threadIDRE = regexp.MustCompile(`\d{1,19}`)

// ThreadsAddressed reads ThreadsAddressedField of a status block's fields:
// the thread ids it lists ("7012, 7015", "[thread 7012]"), and whether the
// field was given at all (absent: the agent did not say, so the caller
// decides; "none" or empty: given, no thread).
func ThreadsAddressed(fields map[string]string) (ids []int64, given bool) {
	v, ok := fields[ThreadsAddressedField]
	if !ok {
		return nil, false
	}
	for _, m := range threadIDRE.FindAllString(v, -1) {
		if n, err := strconv.ParseInt(m, 10, 64); err == nil {
			ids = append(ids, n)
		}
	}
	return ids, true
}
