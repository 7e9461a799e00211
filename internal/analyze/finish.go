package analyze

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// finish turns what was collected into the Analysis.
func (c *collector) finish() *Analysis {
	c.flushDelta()
	c.blocks.endMessage()
	a := &Analysis{
		Status: StatusUnknown, WorkType: "UNKNOWN", TestsStatus: TestsUnknown,
		FilesModified: -1, TasksCompleted: -1, TasksRemaining: -1,
		Errors: []string{}, ClarificationQuestions: []string{}, PermissionDenials: []Denial{},
		Warnings: []string{}, ExitCode: c.opts.ExitCode, ToolCalls: c.toolCalls,
	}
	switch {
	case c.jsonValues == 1 && c.typedEvents == 0 && c.textLines == 0 && !c.streamOnly:
		a.Format = FormatJSON
	case c.typedEvents > 0 || (c.streamOnly && c.textLines == 0):
		a.Format = FormatStreamJSON
	case c.jsonValues == 1 && c.textLines == 0:
		a.Format = FormatJSON
	default:
		a.Format = FormatText
	}

	final := c.finalText()
	prose, proseLines := proseOf(final)
	if c.resultText.set || c.lastAssistant.set {
		for _, l := range proseLines {
			c.cues(l, c.lowerBuf(l))
		}
	}

	c.applyFlat(a)
	c.applyBlock(a)
	c.applyAsked(a)

	// Heuristics fill what the agent left open.
	if a.TestsStatus == TestsUnknown && c.testsStatus != "" {
		a.TestsStatus = c.testsStatus
	}
	if a.FilesModified < 0 && c.implCalls > 0 {
		switch {
		case len(c.editedFiles) > 0:
			a.FilesModified = len(c.editedFiles)
		case c.statEdits == 1:
			// One edit that succeeded is one file; more may have been
			// edits of the same file, which stats without names cannot tell.
			a.FilesModified = 1
		}
	}
	a.IsTestOnly = c.testOnly(a)
	if a.WorkType == "UNKNOWN" {
		switch {
		case a.IsTestOnly:
			a.WorkType = "TESTING"
		case c.implCalls > 0:
			a.WorkType = "IMPLEMENTATION"
		}
	}
	a.HasCompletionSignal = hasCompletionWording(prose)
	questions := questionList(proseLines)
	a.QuestionCount = len(questions)
	if a.ClarificationNeeded && len(a.ClarificationQuestions) == 0 {
		a.ClarificationQuestions = append(a.ClarificationQuestions, questions...)
	}
	if len(a.ClarificationQuestions) > a.QuestionCount {
		a.QuestionCount = len(a.ClarificationQuestions)
	}
	a.AskingQuestions = a.QuestionCount > 0
	if a.Status == StatusComplete {
		a.CompletionIndicators++
	}
	if a.TestsStatus == TestsPassing {
		a.CompletionIndicators++
	}
	if a.TasksRemaining == 0 {
		a.CompletionIndicators++
	}
	if a.HasCompletionSignal {
		a.CompletionIndicators++
	}
	if a.Summary == "" {
		a.Summary = firstSentence(prose)
	}
	a.ConfidenceScore = confidenceScore(a, c.flat.present)

	a.Errors = append(a.Errors, c.errs.lines...)
	a.IsError = c.isError
	a.SessionID = c.sessionID
	if a.SessionID == "" {
		a.SessionID = c.initSessionID
	}
	a.Usage = c.totalUsage()
	var denialNotes []string
	a.PermissionDenials, denialNotes = filterDenials(c.denials, c.opts.AllowedTools)
	a.UsageLimit = c.usageLimit()
	a.Windows = c.windows
	if !a.UsageLimit.Detected && !c.resultOK && (a.IsError || c.opts.ExitCode > 0) {
		texts := append([]string{final}, a.Errors...)
		a.SetupFailure = setupFailure(append(texts, c.stderrLines...))
	}

	// Warnings: why the reader should not take the numbers at face value.
	if a.StatusBlock == nil && !c.flat.present {
		a.Warnings = append(a.Warnings, "no status block; heuristics used")
	}
	a.Warnings = append(a.Warnings, c.blocks.notes.list...)
	a.Warnings = append(a.Warnings, c.notes.list...)
	a.Warnings = append(a.Warnings, denialNotes...)
	if c.skippedLong > 0 {
		a.Warnings = append(a.Warnings, fmt.Sprintf("%d line(s) longer than %d MB were skipped", c.skippedLong, maxLine>>20))
	}
	if a.Format == FormatStreamJSON && !c.sawResult && c.typedEvents > 0 && c.resultExpected() {
		a.Warnings = append(a.Warnings, "transcript has no result event (cut off?); analysed from what it holds")
	}
	if c.limit.zoneNote != "" && a.UsageLimit.Detected {
		a.Warnings = append(a.Warnings, c.limit.zoneNote)
	}
	if a.UsageLimit.Detected && a.UsageLimit.ResetsAt == "" {
		a.Warnings = append(a.Warnings, "usage limit without a reset time")
	}
	return a
}

// confidenceScore is how much of the reading rests on structure rather than
// wording, 0–100, after the request service's ADR (+50 for a status block,
// +10 per completion keyword): +50 for a status block (or the older flat
// schema's self-reported fields), +20 for an explicit EXIT_SIGNAL, +10 per
// completion indicator (STATUS COMPLETE, tests passing, no tasks remaining,
// completion wording); at most 100.
func confidenceScore(a *Analysis, flat bool) int {
	score := 0
	if a.StatusBlock != nil || flat {
		score += 50
	}
	if a.ExitSignalExplicit {
		score += 20
	}
	score += 10 * a.CompletionIndicators
	return min(score, 100)
}

// resultExpected says whether the transcript is in a format that ends with
// a Result: only such formats give session hints and message ids (see
// activity.Facts).
func (c *collector) resultExpected() bool {
	return c.initSessionID != "" || c.lastMsgID != ""
}

// finalText is the agent's last word: the result text, else its last
// assistant message, else the tail of a plain-text output.
func (c *collector) finalText() string {
	switch {
	case c.resultText.set:
		return c.resultText.String()
	case c.lastAssistant.set:
		return c.lastAssistant.String()
	}
	return c.plainText.String()
}

func (c *collector) applyFlat(a *Analysis) {
	f := c.flat
	if !f.present {
		return
	}
	if f.status != "" {
		a.Status = normStatus(f.status)
	}
	if f.exitSignalSet {
		a.ExitSignal, a.ExitSignalExplicit = f.exitSignal, true
	}
	if f.workType != "" {
		a.WorkType = normWord(f.workType)
	}
	if f.filesModified != nil {
		a.FilesModified = *f.filesModified
	}
	if f.tasksCompleted != nil {
		a.TasksCompleted = *f.tasksCompleted
	}
	if f.tasksRemaining != nil {
		a.TasksRemaining = *f.tasksRemaining
	}
	if f.tests != "" {
		a.TestsStatus = normTests(f.tests)
	}
	a.Summary, a.Recommendation = f.summary, f.recommend
}

// applyBlock reads the status block's fields; they override the flat schema.
func (c *collector) applyBlock(a *Analysis) {
	b := c.blocks.last
	a.StatusBlock = b
	if b == nil {
		return
	}
	f := b.Fields
	if b.Dialect == DialectPromise {
		switch normStatus(f["PROMISE"]) {
		case StatusComplete:
			a.Status, a.ExitSignal, a.ExitSignalExplicit = StatusComplete, true, true
		case StatusBlocked:
			a.Status = StatusBlocked
		}
		return
	}
	if v, ok := f["STATUS"]; ok {
		a.Status = normStatus(v)
	}
	if v, ok := f["EXIT_SIGNAL"]; ok {
		if bv, ok := parseBool(v); ok {
			a.ExitSignal, a.ExitSignalExplicit = bv, true
		} else {
			c.notes.add(fmt.Sprintf("EXIT_SIGNAL value %q not understood; treated as absent", v))
		}
	}
	if v, ok := f["WORK_TYPE"]; ok && v != "" {
		a.WorkType = normWord(v)
	}
	setInt(f, &a.FilesModified, "FILES_MODIFIED")
	setInt(f, &a.TasksCompleted, "TASKS_COMPLETED_THIS_LOOP", "TASKS_COMPLETED")
	setInt(f, &a.TasksRemaining, "TASKS_REMAINING")
	if v, ok := f["TESTS_STATUS"]; ok {
		a.TestsStatus = normTests(v)
	}
	if v := f["RECOMMENDATION"]; v != "" {
		a.Recommendation = v
	}
	for _, k := range []string{"WORK_SUMMARY", "SUMMARY"} {
		if v := f[k]; v != "" {
			a.Summary = v
			break
		}
	}
	for _, k := range []string{"CLARIFICATION_NEEDED", "NEEDS_CLARIFICATION"} {
		if bv, ok := parseBool(f[k]); ok && bv {
			a.ClarificationNeeded = true
		}
	}
	if a.Status == StatusNeedsClarification {
		a.ClarificationNeeded = true
	} else if a.ClarificationNeeded && f["STATUS"] == "" {
		a.Status = StatusNeedsClarification
	}
	if bv, ok := parseBool(f["PR_READY"]); ok {
		a.PRReady = bv
	}
	a.ClarificationQuestions = splitQuestions(f["CLARIFICATION_QUESTIONS"])
}

// testOnly tells an iteration that ran tests and implemented nothing.
func (c *collector) testOnly(a *Analysis) bool {
	switch a.WorkType {
	case "TEST_ONLY", "TESTS_ONLY":
		return true
	}
	if c.implCalls > 0 || c.implCues > 0 || a.FilesModified > 0 {
		return false
	}
	if c.testCmds > 0 {
		return true
	}
	return a.WorkType == "TESTING" && a.FilesModified == 0
}

// totalUsage is the result-level account when it gave tokens; otherwise
// the assistant messages' (each id once), with any cost a result reported.
func (c *collector) totalUsage() Usage {
	if c.resultTokens {
		return c.usage
	}
	var u Usage
	for _, id := range c.msgOrder {
		u.add(c.msgUsage[id])
	}
	u.CostUSD += c.usage.CostUSD
	return u
}

func (c *collector) usageLimit() UsageLimit {
	l := c.limit
	out := UsageLimit{}
	// A successful result means the agent finished its work: a limit
	// sentence in its words is about something else.
	if c.resultOK && !l.rejected && !l.flagged {
		return out
	}
	gemini173 := c.opts.ExitCode == 173 && !c.sawResult
	if !l.rejected && !l.flagged && !l.hasText && !l.api429 && !gemini173 {
		return out
	}
	out.Detected = true
	out.Kind = LimitUnknown
	switch {
	case l.hasText && l.textKind != LimitUnknown && l.textKind != "":
		out.Kind = l.textKind
	case l.kind != "":
		out.Kind = l.kind
	}
	switch {
	case !l.resetEpoch.IsZero():
		out.ResetsAt = l.resetEpoch.Format(time.RFC3339)
	case !l.textReset.IsZero():
		out.ResetsAt = l.textReset.Format(time.RFC3339)
	}
	out.Message = l.textMsg
	if out.Message == "" {
		switch {
		case l.rejected:
			out.Message = "rate limit rejected the request"
		case gemini173:
			out.Message = "agent exited with status 173 (Gemini CLI quota exhausted)"
		default:
			out.Message = "API rate limit (429)"
		}
	}
	return out
}

var (
	structuredLine = regexp.MustCompile(`^\s*[A-Z][A-Z0-9_]{2,}:\s`)
)

// proseOf drops status blocks, structured KEY: lines and code fences from the
// agent's message, leaving the prose the wording heuristics judge.
func proseOf(text string) (string, []string) {
	var lines []string
	inBlock, inFence, inHeader := false, false, false
	for _, l := range strings.Split(text, "\n") {
		m := markerLine(l)
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "```"):
			inFence = !inFence
			continue
		case inFence:
			continue
		case m == ralphOpen || m == clarityOpen || m == "---STATUS---":
			inBlock = true
			continue
		case m == ralphClose || m == clarityClose || m == "---END---":
			inBlock = false
			continue
		case inBlock:
			continue
		case m == "RALPH_STATUS:" || m == "CLARITY_STATUS:":
			inHeader = true
			continue
		case inHeader && startsIndented(l):
			continue
		case promiseRE.MatchString(m), structuredLine.MatchString(l):
			inHeader = false
			continue
		}
		inHeader = false
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n"), lines
}

func firstSentence(prose string) string {
	for _, s := range sentences(prose) {
		s = strings.TrimSpace(strings.TrimLeft(s, "#*-> "))
		if len(s) < 3 {
			continue
		}
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		return s
	}
	return ""
}
