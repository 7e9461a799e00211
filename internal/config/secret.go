package config

import (
	"fmt"
	"io"
	"log/slog"

	"ralph/internal/redact"
)

const redactedText = "[redacted]"

// Secret is a value that must never be printed: every fmt verb, JSON, text
// marshalling and slog show "[redacted]". Reveal returns the real value for
// the one place that needs it (the agent's environment).
type Secret string

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

// String masks the value.
func (Secret) String() string { return redactedText }

// Format masks the value for every verb, including %d and %x, which would
// otherwise bypass String.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedText) }

// MarshalText masks the value in JSON, YAML and the like.
func (Secret) MarshalText() ([]byte, error) { return []byte(redactedText), nil }

// LogValue masks the value in slog output.
func (Secret) LogValue() slog.Value { return slog.StringValue(redactedText) }

// isSecretName says whether a variable name looks like it holds a
// credential; package redact owns the rule, so what is kept secret here is
// what is masked everywhere.
func isSecretName(name string) bool { return redact.IsSecretName(name) }

// scrub masks secrets inside a value that is not itself secret (an agent
// command with an inline key, a URL with a password).
func scrub(v string) string { return redact.String(v) }
