package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"ralph/internal/redact"
)

// Grant is a person's "allow for this task": the exact tool and, for Bash,
// the exact command string. It is never a pattern: a command that differs
// by one character (a space, an argument) is asked about again.
type Grant struct {
	Tool    string `json:"tool"`
	Command string `json:"command,omitempty"`
}

// bashTool is Claude Code's shell tool, the one a grant narrows to its
// command.
const bashTool = "Bash"

// GrantFor is the grant an allowed tool call gives for the rest of its
// task; ok is false for a call nothing can be granted for (a Bash call
// without a command string).
func GrantFor(a Approval) (g Grant, ok bool) {
	if a.Tool == "" {
		return Grant{}, false
	}
	if a.Tool != bashTool {
		return Grant{Tool: a.Tool}, true
	}
	cmd, ok := bashCommand(a.Input)
	if !ok || cmd == "" {
		return Grant{}, false
	}
	return Grant{Tool: a.Tool, Command: cmd}, true
}

// Covers reports whether the grant allows a without asking.
func (g Grant) Covers(a Approval) bool {
	if g.Tool == "" || a.Tool != g.Tool {
		return false
	}
	if g.Tool != bashTool {
		return true
	}
	cmd, ok := bashCommand(a.Input)
	return ok && g.Command != "" && cmd == g.Command
}

// bashCommand is a Bash call's command string, byte for byte.
func bashCommand(input json.RawMessage) (string, bool) {
	var in struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(input, &in) != nil || in.Command == nil {
		return "", false
	}
	return *in.Command, true
}

// Key names the grant for keeping: the tool and a digest of the command,
// so that a command (which may hold a secret) is not kept in the clear.
// Two grants cover the same calls exactly when their keys are equal.
func (g Grant) Key() string {
	if g.Command == "" {
		return g.Tool
	}
	sum := sha256.Sum256([]byte(g.Command))
	return g.Tool + ":" + hex.EncodeToString(sum[:])
}

// KeyOf is the key of the grant that would cover a; ok is false when no
// grant can (see GrantFor).
func KeyOf(a Approval) (string, bool) {
	g, ok := GrantFor(a)
	if !ok {
		return "", false
	}
	return g.Key(), true
}

// Describe is a tool call as people read it: the tool and, for a command
// or a file, that (masked, on one line, at most 160 characters).
func Describe(a Approval) string {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(a.Input, &in)
	arg := in.Command
	if arg == "" {
		arg = in.FilePath
	}
	if arg == "" {
		return a.Tool
	}
	arg = strings.Join(strings.Fields(redact.String(arg)), " ")
	if r := []rune(arg); len(r) > 160 {
		arg = string(r[:159]) + "…"
	}
	return a.Tool + "(" + arg + ")"
}
