package analyze

import (
	"strings"
	"time"

	"ralph/internal/activity"
)

// The collector is the activity.Facts the agents' wire scanners hand what
// an output says. Each method first settles a run of streamed text (see
// TextDelta), since the fact ends it.

var _ activity.Facts = (*collector)(nil)

// settle hands a finished run of streamed text to the readers of the
// agent's words: any fact of an event ends the run but another piece.
// Stderr's facts (read after the output) leave a run still open to finish,
// so its errors are listed after stderr's, as they were when the run was
// ended only by the next event.
func (c *collector) settle() {
	if c.pendingDelta && c.inEvent {
		c.flushDelta()
	}
}

// flushDelta hands a run of streamed text to the readers.
func (c *collector) flushDelta() {
	if !c.pendingDelta {
		return
	}
	c.pendingDelta = false
	c.ownMessage(c.lastAssistant.String())
}

// Session implements activity.Facts.
func (c *collector) Session(id []byte) {
	c.settle()
	c.sessionID = string(id)
}

// SessionHint implements activity.Facts.
func (c *collector) SessionHint(id []byte) {
	c.settle()
	if len(id) > 0 && c.initSessionID == "" {
		c.initSessionID = string(id)
	}
}

// Text implements activity.Facts: blocks of the same message (same id)
// join into one final message.
func (c *collector) Text(id, text string) {
	c.settle()
	if id == "" || id != c.lastMsgID {
		c.lastAssistant.reset()
		c.lastMsgID = strings.Clone(id)
	} else {
		c.lastAssistant.write("\n")
	}
	c.lastAssistant.write(text)
	c.ownMessage(text)
}

// TextDelta implements activity.Facts: the pieces are joined in the final
// message as they come, and read as one message when the run ends.
func (c *collector) TextDelta(text string) {
	c.deltaEvent = true
	if !c.pendingDelta {
		c.lastAssistant.reset()
	}
	c.lastAssistant.write(text)
	c.lastMsgID = "" // a text block after the pieces is a message of its own
	c.pendingDelta = true
}

// Answer implements activity.Facts.
func (c *collector) Answer(text string) {
	c.settle()
	c.lastAssistant.reset()
	c.lastAssistant.write(text)
	c.ownMessage(text)
}

// Tool implements activity.Facts: what a call tells about tests and edits.
func (c *collector) Tool(name, command, path string) {
	c.settle()
	c.toolCalls++
	if activity.WritesFiles(name) {
		c.implCalls++
		if path != "" && len(c.editedFiles) < 10000 && !c.editedFiles[path] {
			c.editedFiles[strings.Clone(path)] = true
		}
		return
	}
	if command == "" {
		return
	}
	if isTestCommand(command) {
		c.testCmds++
	} else if shellWrites.MatchString(command) {
		c.implCalls++
	}
}

// ToolFailed implements activity.Facts: only the head of the output is
// looked at, and nothing of it is held but the error lines.
func (c *collector) ToolFailed(out string) {
	c.settle()
	const maxScan = 16 << 10
	if c.errs.full() {
		return
	}
	if len(out) > maxScan {
		out = out[:maxScan]
	}
	for _, l := range strings.Split(out, "\n") {
		if e, ok := errorLine(l); ok {
			c.errs.add(e)
		}
	}
}

// ToolTotals implements activity.Facts.
func (c *collector) ToolTotals(calls, writes int) {
	c.settle()
	if c.toolCalls != 0 {
		return
	}
	c.toolCalls += calls
	c.implCalls += writes
	c.statEdits += writes
}

// Result implements activity.Facts.
func (c *collector) Result(failed, succeeded bool) {
	c.settle()
	c.sawResult, c.resultEvent = true, true
	if failed {
		c.isError = true
	} else if succeeded {
		c.resultOK = true
	}
}

// ResultText implements activity.Facts.
func (c *collector) ResultText(text string, failed bool) {
	c.settle()
	c.resultText.reset()
	c.resultText.write(text)
	c.ownMessage(text)
	if failed {
		c.addStructuredError(firstLine(text))
	}
}

// Failed implements activity.Facts.
func (c *collector) Failed() {
	c.settle()
	c.isError = true
}

// Usage implements activity.Facts.
func (c *collector) Usage(u activity.Usage, tokens bool) {
	c.settle()
	c.usage.add(Usage(u))
	c.resultUsage = true
	c.resultTokens = c.resultTokens || tokens
}

// maxMessageUsages bounds the assistant messages whose usage is summed when
// a transcript has no result.
const maxMessageUsages = 100000

// MessageUsage implements activity.Facts. Only the first maxMessageUsages
// messages are counted, and so kept.
func (c *collector) MessageUsage(id string, u activity.Usage) {
	c.settle()
	if _, ok := c.msgUsage[id]; ok {
		c.msgUsage[id] = Usage(u)
	} else if len(c.msgOrder) < maxMessageUsages {
		if id == c.lastMsgID {
			id = c.lastMsgID // already a copy
		} else {
			id = strings.Clone(id)
		}
		c.msgOrder = append(c.msgOrder, id)
		c.msgUsage[id] = Usage(u)
	}
}

// Error implements activity.Facts. A message is one report even over
// several lines: the Gemini CLI puts its quota sentence on the first and
// "Please retry in 10800s." two lines further down, so the error keeps the
// later lines too and a limit found on any line takes its reset time from
// the whole message.
func (c *collector) Error(msg string) {
	c.settle()
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return
	}
	c.addStructuredError(foldLines(msg, maxErrorText))
	if c.limit.hasText {
		return
	}
	kind, ok := "", false
	for l := range strings.Lines(msg) {
		if kind, ok = matchLimit(l); ok {
			break
		}
	}
	if !ok {
		// Codex and Gemini put the limit sentence mid-message.
		if kind, ok = matchLimit(msg); !ok && strings.Contains(strings.ToLower(msg), "usage limit") {
			kind, ok = LimitUnknown, true
		}
	}
	if !ok {
		return
	}
	c.limit.hasText = true
	c.limit.textKind = kind
	c.limit.textMsg = foldLines(msg, maxLimitText)
	if t, ok, note := parseReset(msg, c.opts.Now); ok {
		c.limit.textReset, c.limit.zoneNote = t, note
	}
}

// ErrorNote implements activity.Facts.
func (c *collector) ErrorNote(msg string) {
	c.settle()
	c.addStructuredError(msg)
}

// Denied implements activity.Facts.
func (c *collector) Denied(tool, command string) {
	c.settle()
	c.addDenial(tool, command)
}

// LimitReached implements activity.Facts.
func (c *collector) LimitReached() {
	c.settle()
	c.limit.flagged = true
}

// Limit429 implements activity.Facts.
func (c *collector) Limit429() {
	c.settle()
	c.limit.api429 = true
}

// LimitRejected implements activity.Facts.
func (c *collector) LimitRejected(resetsAt time.Time, kind string) {
	c.settle()
	c.limit.rejected = true
	if !resetsAt.IsZero() {
		c.limit.resetEpoch = resetsAt
	}
	if kind != "" {
		c.limit.kind = kindOf(kind)
	}
}

// WindowUsed implements activity.Facts.
func (c *collector) WindowUsed(kind string, used float64, resetsAt time.Time) {
	w := Window{Kind: kind, Used: used, ResetsAt: resetsAt}
	for i := range c.windows {
		if c.windows[i].Kind == kind {
			c.windows[i] = w
			return
		}
	}
	if len(c.windows) < maxWindows {
		c.windows = append(c.windows, w)
	}
}

// QuotaError implements activity.Facts: the limit's message, unless the
// agent's words already gave one.
func (c *collector) QuotaError(msg, detail string) {
	c.settle()
	if c.limit.hasText {
		return
	}
	c.limit.hasText, c.limit.textKind, c.limit.textMsg = true, LimitUnknown, foldLines(msg, maxLimitText)
	if t, ok, note := parseReset(detail, c.opts.Now); ok {
		c.limit.textReset, c.limit.zoneNote = t, note
	}
}
