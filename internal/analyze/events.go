package analyze

import (
	"strings"
	"time"

	"ralph/internal/jsonscan"
)

// event handles one JSON object of a transcript (or a whole JSON document).
// It reports whether the object had a type some supported format uses.
func (c *collector) event(o *obj) bool {
	if c.pendingGemini && (o.typ != "message" || (o.role != "assistant" && o.role != "model")) {
		c.flushGemini()
	}
	switch o.typ {
	case "system":
		if len(o.sessionID) > 0 && c.initSessionID == "" {
			c.initSessionID = string(o.sessionID)
		}
	case "assistant":
		c.claudeAssistant(o)
	case "user":
		c.claudeUser(o)
	case "result":
		if o.stats != nil && o.result == nil && o.usage == nil {
			c.geminiResult(o)
		} else {
			c.claudeResult(o)
		}
	case "rate_limit_event":
		c.rateLimitEvent(o.rateLimit)
	case "stream_event", "turn.started", "item.started", "item.updated", "tool_progress", "control_request", "control_response", "keep_alive":
	case "thread.started":
		if o.threadID != "" {
			c.sessionID = o.threadID
		}
	case "item.completed":
		c.codexItem(o.item)
	case "turn.completed":
		c.addUsageObject(o.usage)
	case "turn.failed":
		c.isError = true
		if msg := stringField(o.errorRaw, "message"); msg != "" {
			c.errorMessage(msg)
		}
	case "error":
		msg := o.errorStr
		if o.message != nil {
			if s := jsonscan.New(o.message); s.Peek() == jsonscan.String {
				msg, _ = s.String()
			}
		}
		if msg == "" {
			msg = stringField(o.errorRaw, "message")
		}
		c.errorMessage(msg)
	case "init":
		if len(o.sessionID) > 0 {
			c.sessionID = string(o.sessionID)
		}
	case "message":
		c.geminiMessage(o)
	case "tool_use":
		cmd, path := toolTarget(o.params)
		c.toolUse(o.toolName, cmd, path)
	case "tool_result":
		if o.status == "error" {
			if s := jsonscan.New(o.output); s.Peek() == jsonscan.String {
				out, _ := s.String()
				c.failedToolOutput(out)
			}
			c.failedToolOutput(stringField(o.errorRaw, "message"))
		}
	case "":
		return c.untyped(o)
	default:
		return false
	}
	return true
}

// errorMessage handles an error the agent CLI itself reported. A message is
// one report even over several lines: the Gemini CLI puts its quota sentence
// on the first and "Please retry in 10800s." two lines further down, so the
// error keeps the later lines too and a limit found on any line takes its
// reset time from the whole message.
func (c *collector) errorMessage(msg string) {
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

func (c *collector) claudeAssistant(o *obj) {
	if len(o.sessionID) > 0 && c.initSessionID == "" {
		c.initSessionID = string(o.sessionID)
	}
	if o.apiError == "usage_limit_reached" || o.errorStr == "rate_limit" {
		c.limit.flagged = true
	}
	if len(o.message) == 0 {
		return
	}
	var id string
	var usage []byte
	s := jsonscan.New(o.message)
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "id":
			id, _ = s.String()
		case "usage":
			usage, _ = s.Raw()
		case "content":
			if s.Peek() == jsonscan.String { // older shape: plain string content
				_ = c.decodeText(s)
				c.assistantText(id, c.textView())
				return nil
			}
			return s.Array(func(int) error { return c.claudeBlock(s, id) })
		}
		return nil
	})
	if id != "" && usage != nil {
		var u Usage
		readClaudeUsage(usage, &u)
		// Streaming updates repeat a message: the last wins. Only the first
		// maxMessageUsages messages are counted, and so kept.
		if _, ok := c.msgUsage[id]; ok {
			c.msgUsage[id] = u
		} else if len(c.msgOrder) < maxMessageUsages {
			c.msgOrder = append(c.msgOrder, id)
			c.msgUsage[id] = u
		}
	}
}

// maxMessageUsages bounds the assistant messages whose usage is summed when
// a transcript has no result.
const maxMessageUsages = 100000

// claudeBlock reads one content block of an assistant message.
func (c *collector) claudeBlock(s *jsonscan.Scanner, msgID string) error {
	if s.Peek() != jsonscan.Object {
		return s.Skip()
	}
	var typ []byte
	var name string
	var input []byte
	c.text = c.text[:0]
	err := s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			typ, err = s.StringBytes()
		case "text":
			err = c.decodeText(s)
		case "name":
			name, err = s.String()
		case "input":
			input, err = s.Raw()
		}
		return err
	})
	switch string(typ) {
	case "text":
		c.assistantText(msgID, c.textView())
	case "tool_use", "server_tool_use":
		cmd, path := toolTarget(input)
		c.toolUse(name, cmd, path)
	}
	return err
}

// toolTarget reads the command or file a tool call works on.
func toolTarget(input []byte) (command, path string) {
	if len(input) == 0 {
		return "", ""
	}
	s := jsonscan.New(input)
	if s.Peek() != jsonscan.Object {
		return "", ""
	}
	_ = s.Object(func(k []byte) error {
		if s.Peek() != jsonscan.String {
			return nil
		}
		switch string(k) {
		case "command", "cmd":
			command, _ = s.String()
		case "file_path", "path", "notebook_path", "absolute_path":
			path, _ = s.String()
		}
		return nil
	})
	return command, path
}

// claudeUser looks only at tool results that failed: their head may hold the
// error the agent is stuck on. Everything else in a user event is an echo.
// Most results did not fail: reading the line found no "is_error" key with
// a value other than false in the message (o.mayFail), and its content is
// then not scanned again. (Inside a string a quote is escaped, so such a key
// is a key.)
func (c *collector) claudeUser(o *obj) {
	if len(o.message) == 0 || !o.mayFail {
		return
	}
	s := jsonscan.New(o.message)
	_ = s.Object(func(k []byte) error {
		if string(k) != "content" || s.Peek() != jsonscan.Array {
			return nil
		}
		return s.Array(func(int) error {
			if s.Peek() != jsonscan.Object {
				return s.Skip()
			}
			var typ string
			var failed bool
			var content []byte
			err := s.Object(func(k []byte) error {
				var err error
				switch string(k) {
				case "type":
					typ, err = s.String()
				case "is_error":
					failed, err = s.Bool()
				case "content":
					content, err = s.Raw()
				}
				return err
			})
			if typ == "tool_result" && failed {
				c.failedToolOutput(contentText(content))
			}
			return err
		})
	})
}

// contentText reads a tool result's content: a string or text blocks.
func contentText(raw []byte) string {
	s := jsonscan.New(raw)
	switch s.Peek() {
	case jsonscan.String:
		t, _ := s.String()
		return t
	case jsonscan.Array:
		var b strings.Builder
		eachObject(raw, func(s *jsonscan.Scanner) {
			_ = s.Object(func(k []byte) error {
				if string(k) == "text" && s.Peek() == jsonscan.String {
					t, _ := s.String()
					b.WriteString(t)
					b.WriteByte('\n')
				}
				return nil
			})
		})
		return b.String()
	}
	return ""
}

func (c *collector) claudeResult(o *obj) {
	c.sawResult = true
	if len(o.sessionID) > 0 {
		c.sessionID = string(o.sessionID)
	}
	if o.isError {
		c.isError = true
	} else if o.hasIsError {
		c.resultOK = true
	}
	if o.apiError == "usage_limit_reached" {
		c.limit.flagged = true
	}
	if o.apiErrorStatus == 429 {
		c.limit.api429 = true
	}
	key := string(o.uuid)
	dup := key != "" && c.seenResults[key]
	if key != "" {
		c.seenResults[key] = true
	}
	if !dup {
		var u Usage
		switch {
		case o.usage != nil:
			readClaudeUsage(o.usage, &u)
			c.resultTokens = true
		case o.modelUsage != nil: // per model only: summed over the models
			readModelUsage(o.modelUsage, &u)
			c.resultTokens = true
		}
		if o.cost != 0 || u.CostUSD == 0 {
			u.CostUSD = o.cost
		}
		c.usage.add(u)
		c.resultUsage = true
	}
	c.readDenials(o.denials)
	eachString(o.errors, c.addStructuredError)
	if o.result != nil {
		c.resultText.reset()
		c.resultText.write(*o.result)
		c.ownMessage(*o.result)
		if o.isError {
			c.addStructuredError(firstLine(*o.result))
		}
	}
	c.readFlat(o)
}

func eachString(raw []byte, fn func(string)) {
	if len(raw) == 0 {
		return
	}
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Array {
		return
	}
	_ = s.Array(func(int) error {
		if s.Peek() == jsonscan.String {
			t, err := s.String()
			fn(t)
			return err
		}
		return s.Skip()
	})
}

func (c *collector) readDenials(raw []byte) {
	eachObject(raw, func(s *jsonscan.Scanner) {
		var tool, command string
		var input []byte
		_ = s.Object(func(k []byte) error {
			switch string(k) {
			case "tool_name", "tool":
				tool, _ = s.String()
			case "command":
				command, _ = s.String()
			case "tool_input":
				input, _ = s.Raw()
			}
			return nil
		})
		if tool == askUserTool {
			c.addAsked(input) // a question to the person, not a tool to allow
			return
		}
		if cmd, _ := toolTarget(input); cmd != "" {
			command = cmd
		}
		if tool != "" {
			c.addDenial(tool, command)
		}
	})
}

func readClaudeUsage(raw []byte, u *Usage) {
	if len(raw) == 0 {
		return
	}
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return
	}
	_ = s.Object(func(k []byte) error {
		var f float64
		switch string(k) {
		case "input_tokens":
			f, _ = s.Number()
			u.InputTokens += int64(f)
		case "output_tokens":
			f, _ = s.Number()
			u.OutputTokens += int64(f)
		case "cache_read_input_tokens", "cached_input_tokens", "cached":
			f, _ = s.Number()
			u.CacheReadInputTokens += int64(f)
		case "cache_creation_input_tokens", "cache_write_input_tokens":
			f, _ = s.Number()
			u.CacheCreationInputTokens += int64(f)
		case "total_cost_usd", "cost_usd":
			f, _ = s.Number()
			u.CostUSD += f
		}
		return nil
	})
}

// readModelUsage sums a Claude result's modelUsage: {model: {inputTokens,
// outputTokens, cacheReadInputTokens, cacheCreationInputTokens, costUSD}}.
func readModelUsage(raw []byte, u *Usage) {
	s := jsonscan.New(raw)
	if s.Peek() != jsonscan.Object {
		return
	}
	_ = s.Object(func([]byte) error {
		if s.Peek() != jsonscan.Object {
			return s.Skip()
		}
		return s.Object(func(k []byte) error {
			var f float64
			switch string(k) {
			case "inputTokens":
				f, _ = s.Number()
				u.InputTokens += int64(f)
			case "outputTokens":
				f, _ = s.Number()
				u.OutputTokens += int64(f)
			case "cacheReadInputTokens":
				f, _ = s.Number()
				u.CacheReadInputTokens += int64(f)
			case "cacheCreationInputTokens":
				f, _ = s.Number()
				u.CacheCreationInputTokens += int64(f)
			case "costUSD":
				f, _ = s.Number()
				u.CostUSD += f
			}
			return nil
		})
	})
}

// addUsageObject adds a turn's usage (Codex turn.completed).
func (c *collector) addUsageObject(raw []byte) {
	var u Usage
	readClaudeUsage(raw, &u)
	c.usage.add(u)
	c.resultUsage, c.resultTokens = true, true
}

func (c *collector) rateLimitEvent(raw []byte) {
	if len(raw) == 0 {
		return
	}
	var status, kind string
	var resets float64
	s := jsonscan.New(raw)
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "status":
			status, _ = s.String()
		case "resetsAt":
			resets, _ = s.Number()
		case "rateLimitType":
			kind, _ = s.String()
		}
		return nil
	})
	if status != "rejected" {
		return
	}
	c.limit.rejected = true
	if resets > 0 {
		if resets > 1e12 { // milliseconds
			resets /= 1000
		}
		c.limit.resetEpoch = time.Unix(int64(resets), 0).UTC()
	}
	if kind != "" {
		c.limit.kind = kindOf(kind)
	}
}
