package analyze

import (
	"strings"

	"ralph/internal/jsonscan"
)

// untyped handles an object without a "type": a Gemini json result, the
// older flat schema, a legacy CLI object or a bare error object. It reports
// whether the object looked like any of them.
func (c *collector) untyped(o *obj) bool {
	if o.known == 0 {
		return false
	}
	if len(o.sessionID) > 0 {
		c.sessionID = string(o.sessionID)
	}
	if o.response != nil { // Gemini CLI --output-format json
		c.lastAssistant.reset()
		c.lastAssistant.write(*o.response)
		c.ownMessage(*o.response)
	}
	if o.stats != nil {
		c.readGeminiStats(o.stats)
	}
	if o.errorRaw != nil { // {"error": {"code": 429, "message": …, "status": "RESOURCE_EXHAUSTED"}}
		msg := stringField(o.errorRaw, "message")
		if st := stringField(o.errorRaw, "status"); st != "" && !strings.Contains(msg, st) {
			msg = st + ": " + msg
		}
		c.isError = true
		c.errorMessage(msg)
		if code := numberField(o.errorRaw, "code"); code == 429 && !c.limit.hasText {
			c.limit.hasText, c.limit.textKind, c.limit.textMsg = true, LimitUnknown, foldLines(msg, maxLimitText)
			if t, ok, note := parseReset(string(o.errorRaw), c.opts.Now); ok {
				c.limit.textReset, c.limit.zoneNote = t, note
			}
		}
	}
	if o.result != nil || o.hasIsError || o.usage != nil {
		c.claudeResult(o)
		return true
	}
	c.readFlat(o)
	return true
}

// readFlat reads the older flat schema's self-reported fields.
func (c *collector) readFlat(o *obj) {
	f := &c.flat
	if o.status != "" {
		f.present, f.status = true, o.status
	}
	if o.workType != "" {
		f.present, f.workType = true, o.workType
	}
	if o.summary != "" {
		f.present, f.summary = true, o.summary
	}
	if o.testsStatus != "" {
		f.present, f.tests = true, o.testsStatus
	}
	if o.recommendation != "" {
		f.present, f.recommend = true, o.recommendation
	}
	if o.exitSignal != nil {
		s := jsonscan.New(o.exitSignal)
		if s.Peek() == jsonscan.Bool || s.Peek() == jsonscan.String {
			v, _ := s.Bool()
			f.present, f.exitSignal, f.exitSignalSet = true, v, true
		}
	}
	if o.filesModified != nil {
		f.present, f.filesModified = true, o.filesModified
	}
	if o.tasksCompleted != nil {
		f.present, f.tasksCompleted = true, o.tasksCompleted
	}
	if o.tasksRemaining != nil {
		f.present, f.tasksRemaining = true, o.tasksRemaining
	}
	if o.denials != nil && !c.sawResult {
		c.readDenials(o.denials)
	}
	if len(o.metadata) > 0 {
		c.readMetadata(o.metadata)
	}
}

// readMetadata reads the legacy metadata object.
func (c *collector) readMetadata(raw []byte) {
	f := &c.flat
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return
	}
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "files_changed":
			if v, err := intPtr(s); err == nil && v != nil && f.filesModified == nil {
				f.present, f.filesModified = true, v
			}
		case "completion_status":
			if st, _ := s.String(); st != "" && f.status == "" {
				f.present, f.status = true, st
			}
		case "session_id", "sessionId":
			if id, _ := s.String(); id != "" && c.sessionID == "" {
				c.sessionID = id
			}
		case "usage":
			u, _ := s.Raw()
			if !c.resultUsage {
				var us Usage
				readClaudeUsage(u, &us)
				c.usage.add(us)
				c.resultUsage, c.resultTokens = true, true
			}
		}
		return nil
	})
}

func numberField(raw []byte, name string) float64 {
	var out float64
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return 0
	}
	_ = s.Object(func(k []byte) error {
		if string(k) == name {
			out, _ = s.Number()
		}
		return nil
	})
	return out
}
