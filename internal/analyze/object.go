package analyze

import (
	"ralph/internal/jsonscan"
)

// obj holds the top-level members of one JSON value that any supported
// format uses. Raw members alias the input line and are valid only while
// that line is being handled: nothing here outlives one event.
type obj struct {
	typ, subtype, role           string
	threadID                     string
	status, workType, summary    string
	testsStatus, recommendation  string
	apiError, toolName, errorStr string

	result, response, content *string

	isError, hasIsError, delta, isAPIErrorMessage bool
	// mayFail: the message has an "is_error" member whose value is not
	// false, so a tool result in it may have failed (claudeUser).
	mayFail                                       bool
	cost                                          float64
	hasCost                                       bool
	apiErrorStatus                                int
	filesModified, tasksCompleted, tasksRemaining *int

	exitSignal []byte // raw: bool or string

	// sessionID and uuid are on every event of a Claude transcript and
	// needed on few: decoded, aliasing the line when they have no escapes.
	sessionID, uuid []byte

	modelUsage                                                                                              []byte
	usage, denials, errorRaw, message, item, rateLimit, stats, metadata, params, errors, output, contentRaw []byte

	known int // members with a name some format uses
}

func (o *obj) parse(b []byte) bool {
	s := jsonscan.New(b)
	err := s.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			o.typ, err = commonString(s)
		case "subtype":
			o.subtype, err = commonString(s)
		case "role":
			o.role, err = commonString(s)
		case "session_id", "sessionId":
			o.sessionID, err = s.StringBytes()
		case "thread_id":
			o.threadID, err = s.String()
		case "uuid":
			o.uuid, err = s.StringBytes()
		case "status":
			if s.Peek() == jsonscan.String {
				o.status, err = s.String()
			}
		case "work_type":
			o.workType, err = s.String()
		case "summary":
			if s.Peek() == jsonscan.String {
				o.summary, err = s.String()
			}
		case "tests_status":
			o.testsStatus, err = s.String()
		case "recommendation":
			o.recommendation, err = s.String()
		case "api_error":
			if s.Peek() == jsonscan.String {
				o.apiError, err = s.String()
			}
		case "tool_name":
			o.toolName, err = s.String()
		case "result":
			if s.Peek() == jsonscan.String {
				var v string
				v, err = s.String()
				o.result = &v
			}
		case "response":
			if s.Peek() == jsonscan.String {
				var v string
				v, err = s.String()
				o.response = &v
			}
		case "content":
			if s.Peek() == jsonscan.String {
				var v string
				v, err = s.String()
				o.content = &v
			} else {
				o.contentRaw, err = s.Raw()
			}
		case "is_error":
			o.hasIsError = true
			o.isError, err = s.Bool()
		case "delta":
			o.delta, err = s.Bool()
		case "is_api_error_message":
			o.isAPIErrorMessage, err = s.Bool()
		case "total_cost_usd", "cost_usd":
			o.hasCost = true
			o.cost, err = s.Number()
		case "api_error_status":
			var f float64
			f, err = s.Number()
			o.apiErrorStatus = int(f)
		case "files_modified":
			o.filesModified, err = intPtr(s)
		case "tasks_completed", "tasks_completed_this_loop":
			o.tasksCompleted, err = intPtr(s)
		case "tasks_remaining":
			o.tasksRemaining, err = intPtr(s)
		case "exit_signal":
			o.exitSignal, err = s.Raw()
		case "usage":
			o.usage, err = s.Raw()
		case "modelUsage":
			o.modelUsage, err = s.Raw()
		case "permission_denials":
			o.denials, err = s.Raw()
		case "error":
			if s.Peek() == jsonscan.String {
				o.errorStr, err = s.String()
			} else {
				o.errorRaw, err = s.Raw()
			}
		case "message":
			o.message, o.mayFail, err = s.RawFind("is_error", notFalse)
		case "item":
			o.item, err = s.Raw()
		case "rate_limit_info":
			o.rateLimit, err = s.Raw()
		case "stats":
			o.stats, err = s.Raw()
		case "metadata":
			o.metadata, err = s.Raw()
		case "parameters":
			o.params, err = s.Raw()
		case "errors":
			o.errors, err = s.Raw()
		case "output":
			o.output, err = s.Raw()
		case "error_count", "exitSignal":
		default:
			return nil
		}
		o.known++
		return err
	})
	return err == nil && s.AtEnd()
}

// commonString reads a string value, without allocating when it is one that
// every few lines hold (an event's type, a role).
func commonString(s *jsonscan.Scanner) (string, error) {
	b, err := s.StringBytes()
	switch string(b) {
	case "assistant":
		return "assistant", err
	case "user":
		return "user", err
	case "result":
		return "result", err
	case "system":
		return "system", err
	case "success":
		return "success", err
	case "stream_event":
		return "stream_event", err
	case "message":
		return "message", err
	case "model":
		return "model", err
	case "tool_use":
		return "tool_use", err
	case "tool_result":
		return "tool_result", err
	case "item.completed":
		return "item.completed", err
	}
	return string(b), err
}

// notFalse accepts the first byte of any value but false.
func notFalse(first byte) bool { return first != 'f' }

func intPtr(s *jsonscan.Scanner) (*int, error) {
	if s.Peek() == jsonscan.Null {
		return nil, s.Skip()
	}
	f, err := s.Number()
	v := int(f)
	return &v, err
}

// eachObject calls fn for every object element of a raw JSON array.
func eachObject(raw []byte, fn func(s *jsonscan.Scanner)) {
	if len(raw) == 0 {
		return
	}
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Array {
		return
	}
	_ = s.Array(func(int) error {
		if s.Peek() == jsonscan.Object {
			fn(s)
		}
		return nil
	})
}

// stringField reads one string member of a raw object.
func stringField(raw []byte, name string) string {
	var out string
	if len(raw) == 0 {
		return ""
	}
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return ""
	}
	_ = s.Object(func(k []byte) error {
		if string(k) == name && s.Peek() == jsonscan.String {
			out, _ = s.String()
		}
		return nil
	})
	return out
}
