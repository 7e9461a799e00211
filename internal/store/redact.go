package store

import "ralph/internal/redact"

// Redacted replaces every secret that Redact finds.
const Redacted = redact.Mask

// Redact masks secrets in s; see package redact, which owns the rules and
// the known secret values.
func Redact(s string) string { return redact.String(s) }
