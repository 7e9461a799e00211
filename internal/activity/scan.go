package activity

import (
	"strings"
	"unsafe"

	"ralph/internal/jsonscan"
)

// What the agents' formats share, read with the streaming scanner for
// their Scanners. The agents name these the same way, or in spellings no
// other agent gives another meaning, so one reading serves them all.

// CommandAndPath reads the command or file a tool call works on from its
// JSON input: Claude's file_path and notebook_path, Gemini's absolute_path,
// and the command and path every agent calls so.
func CommandAndPath(input []byte) (command, path string) {
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

// ScanUsage adds a usage object's counts to u: Anthropic's token names
// (Claude Code, and its older metadata), OpenAI's cached_input_tokens
// (Codex), Gemini's cached, and a cost.
func ScanUsage(raw []byte, u *Usage) {
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
		// Snake case as the APIs write it; camel case as Claude Code's
		// modelUsage and wrappers around the CLIs write it.
		case "input_tokens", "inputTokens":
			f, _ = s.Number()
			u.InputTokens += int64(f)
		case "output_tokens", "outputTokens":
			f, _ = s.Number()
			u.OutputTokens += int64(f)
		case "cache_read_input_tokens", "cached_input_tokens", "cached", "cacheReadInputTokens":
			f, _ = s.Number()
			u.CacheReadInputTokens += int64(f)
		case "cache_creation_input_tokens", "cache_write_input_tokens", "cacheCreationInputTokens":
			f, _ = s.Number()
			u.CacheCreationInputTokens += int64(f)
		case "total_cost_usd", "cost_usd", "costUSD":
			f, _ = s.Number()
			u.CostUSD += f
		}
		return nil
	})
}

// WritesFiles tells the tools that write files, by any agent's name for
// them: a tool call of one is work done even when it names no file.
// (OpenCode's calls reach the analyzer under Gemini's event names, with
// OpenCode's own tool names.)
func WritesFiles(tool string) bool {
	var buf [32]byte
	low := tool
	if len(tool) <= len(buf) && isASCII(tool) {
		for i := 0; i < len(tool); i++ { // lower-cased without allocating
			ch := tool[i]
			if 'A' <= ch && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			buf[i] = ch
		}
		low = unsafe.String(&buf[0], len(tool))
	} else {
		low = strings.ToLower(tool)
	}
	switch low {
	case "write", "edit", "multiedit", "notebookedit", "write_file", "replace", "edit_file",
		"apply_patch", "str_replace_editor", "str_replace_based_edit_tool", "create_file", "file_change":
		return true
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// BoundedCount turns a count a format reports into an int that sums cannot
// overflow.
func BoundedCount(f float64) int {
	if f < 0 {
		return 0
	}
	return int(min(f, 1e9))
}
