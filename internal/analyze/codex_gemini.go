package analyze

import "ralph/internal/jsonscan"

// Codex `exec --json` items and Gemini CLI events.

func (c *collector) codexItem(raw []byte) {
	if len(raw) == 0 {
		return
	}
	var typ, text, command, output string
	var exitCode float64
	var hasExit bool
	var changes []byte
	s := jsonscan.New(raw)
	_ = s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			typ, err = s.String()
		case "text", "message":
			if s.Peek() == jsonscan.String {
				text, err = s.String()
			}
		case "command":
			if s.Peek() == jsonscan.String {
				command, err = s.String()
			}
		case "aggregated_output":
			// Held only until the exit code is known: failed commands' heads are read.
			if s.Peek() == jsonscan.String {
				var b []byte
				b, err = s.StringBytes()
				if len(b) > 16<<10 {
					b = b[:16<<10]
				}
				output = string(b)
			}
		case "exit_code":
			if s.Peek() == jsonscan.Number {
				hasExit = true
				exitCode, err = s.Number()
			}
		case "changes":
			changes, err = s.Raw()
		}
		return err
	})
	switch typ {
	case "agent_message":
		c.assistantText("", text)
	case "command_execution":
		c.toolUse("shell", command, "")
		if hasExit && exitCode != 0 {
			c.failedToolOutput(output)
		}
	case "file_change":
		n := 0
		eachObject(changes, func(s *jsonscan.Scanner) {
			_ = s.Object(func(k []byte) error {
				if string(k) == "path" {
					p, _ := s.String()
					c.toolUse("file_change", "", p)
					n++
				}
				return nil
			})
		})
		if n == 0 {
			c.toolUse("file_change", "", "")
		}
	case "mcp_tool_call", "web_search":
		c.toolCalls++
	}
}

// flushGemini hands a finished run of streamed deltas to the readers.
func (c *collector) flushGemini() {
	if !c.pendingGemini {
		return
	}
	c.pendingGemini = false
	c.ownMessage(c.lastAssistant.String())
}

func (c *collector) geminiMessage(o *obj) {
	if o.role != "assistant" && o.role != "model" {
		return
	}
	text := ""
	if o.content != nil {
		text = *o.content
	}
	if !o.delta {
		// A whole message is one text block, as Claude's are: its status
		// block counts even when another message follows at once.
		c.flushGemini()
		c.assistantText("", text)
		return
	}
	// Streamed deltas of one answer arrive as many events; they join into
	// one message until something else happens.
	if !c.pendingGemini {
		c.lastAssistant.reset()
	}
	c.lastAssistant.write(text)
	c.lastMsgID = "gemini-delta"
	c.pendingGemini = true
}

func (c *collector) geminiResult(o *obj) {
	if o.status == "error" {
		c.isError = true
		c.errorMessage(stringField(o.errorRaw, "message"))
	}
	c.readGeminiStats(o.stats)
}

// readGeminiStats sums token counts: the stream result's flat stats or the
// json output's per-model stats.
func (c *collector) readGeminiStats(raw []byte) {
	if len(raw) == 0 {
		return
	}
	var u Usage
	var models, tools []byte
	s := jsonscan.New(raw)
	_ = s.Object(func(k []byte) error {
		var f float64
		switch string(k) {
		case "input_tokens":
			f, _ = s.Number()
			u.InputTokens = int64(f)
		case "output_tokens":
			f, _ = s.Number()
			u.OutputTokens = int64(f)
		case "cached":
			f, _ = s.Number()
			u.CacheReadInputTokens = int64(f)
		case "models":
			models, _ = s.Raw()
		case "tools":
			tools, _ = s.Raw()
		}
		return nil
	})
	if c.toolCalls == 0 {
		c.readGeminiTools(tools)
	}
	if u.InputTokens == 0 && u.OutputTokens == 0 && len(models) > 0 {
		ms := jsonscan.New(models)
		_ = ms.Object(func([]byte) error {
			return ms.Object(func(k []byte) error {
				switch string(k) { // a model's counts, flat (stream-json) or under "tokens" (json)
				case "input_tokens":
					f, _ := ms.Number()
					u.InputTokens += int64(f)
					return nil
				case "output_tokens":
					f, _ := ms.Number()
					u.OutputTokens += int64(f)
					return nil
				case "cached":
					f, _ := ms.Number()
					u.CacheReadInputTokens += int64(f)
					return nil
				}
				if string(k) != "tokens" {
					return nil
				}
				var prompt, input, cand, cached float64
				_ = ms.Object(func(k []byte) error {
					switch string(k) {
					case "prompt":
						prompt, _ = ms.Number()
					case "input":
						input, _ = ms.Number()
					case "candidates":
						cand, _ = ms.Number()
					case "cached":
						cached, _ = ms.Number()
					}
					return nil
				})
				if prompt == 0 {
					prompt = input
				}
				u.InputTokens += int64(prompt)
				u.OutputTokens += int64(cand)
				u.CacheReadInputTokens += int64(cached)
				return nil
			})
		})
	}
	c.usage.add(u)
	c.resultUsage, c.resultTokens = true, true
}

// readGeminiTools reads the tool totals of the json output's stats, which
// name no single call: how many calls there were, and how many of each tool
// succeeded. They are the only account of the work when no tool events were
// seen.
func (c *collector) readGeminiTools(raw []byte) {
	if len(raw) == 0 {
		return
	}
	s := jsonscan.New(raw)
	_ = s.Object(func(k []byte) error {
		switch string(k) {
		case "totalCalls":
			f, err := s.Number()
			c.toolCalls += boundedCount(f)
			return err
		case "byName":
			return s.Object(func(name []byte) error {
				edit := isEditTool(string(name))
				return s.Object(func(k []byte) error {
					if string(k) != "success" || !edit {
						return nil
					}
					f, err := s.Number()
					c.implCalls += boundedCount(f)
					c.statEdits += boundedCount(f)
					return err
				})
			})
		}
		return nil
	})
}

// boundedCount turns a reported count into an int that sums cannot overflow.
func boundedCount(f float64) int {
	if f < 0 {
		return 0
	}
	return int(min(f, 1e9))
}
