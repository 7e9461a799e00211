package analyze

import (
	"ralph/internal/activity"
	claudewire "ralph/internal/agent/claude/wire"
	"ralph/internal/jsonscan"
)

// untyped handles an object without a "type": a whole output that is one
// document. It may be an agent's json output (Gemini CLI's, an older
// Claude Code's result), a bare API error object, or the older flat schema
// of self-reported fields, which any of them may carry too. It reports
// whether the object was well-formed.
func (c *collector) untyped(b []byte) bool {
	var f flatObject
	if !f.parse(b) {
		return false
	}
	if len(f.sessionID) > 0 {
		c.sessionID = string(f.sessionID)
	}
	c.gemini.Document(b)
	c.claude.Document(b)
	c.readFlat(&f)
	return true
}

// flatObject holds the older flat schema's members of one object. Raw
// members alias the input.
type flatObject struct {
	sessionID                                     []byte
	status, workType, summary                     string
	testsStatus, recommendation                   string
	filesModified, tasksCompleted, tasksRemaining *int
	exitSignal, denials, metadata                 []byte // exitSignal: a bool or a string
}

func (f *flatObject) parse(b []byte) bool {
	s := jsonscan.New(b)
	err := s.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "session_id", "sessionId":
			f.sessionID, err = s.StringBytes()
		case "status":
			if s.Peek() == jsonscan.String {
				f.status, err = s.String()
			}
		case "work_type":
			f.workType, err = s.String()
		case "summary":
			if s.Peek() == jsonscan.String {
				f.summary, err = s.String()
			}
		case "tests_status":
			f.testsStatus, err = s.String()
		case "recommendation":
			f.recommendation, err = s.String()
		case "files_modified":
			f.filesModified, err = intPtr(s)
		case "tasks_completed", "tasks_completed_this_loop":
			f.tasksCompleted, err = intPtr(s)
		case "tasks_remaining":
			f.tasksRemaining, err = intPtr(s)
		case "exit_signal":
			f.exitSignal, err = s.Raw()
		case "permission_denials":
			f.denials, err = s.Raw()
		case "metadata":
			f.metadata, err = s.Raw()
		}
		return err
	})
	return err == nil && s.AtEnd()
}

func intPtr(s *jsonscan.Scanner) (*int, error) {
	if s.Peek() == jsonscan.Null {
		return nil, s.Skip()
	}
	f, err := s.Number()
	v := int(f)
	return &v, err
}

// readFlat reads the older flat schema's self-reported fields.
func (c *collector) readFlat(o *flatObject) {
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
		// The schema copied Claude Code's refused tools, in its older shape.
		claudewire.Denials(o.denials, c)
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
				var us activity.Usage
				activity.ScanUsage(u, &us)
				c.usage.add(Usage(us))
				c.resultUsage, c.resultTokens = true, true
			}
		}
		return nil
	})
}
