package config

import (
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
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

// isSecretName says whether a variable name looks like it holds a credential:
// ANTHROPIC_API_KEY, GITHUB_TOKEN, E2B_API_KEY, AWS_SECRET_ACCESS_KEY, ...
func isSecretName(name string) bool {
	u := strings.ToUpper(name)
	return strings.HasSuffix(u, "_KEY") || strings.HasSuffix(u, "_TOKEN") || strings.HasSuffix(u, "APIKEY") ||
		strings.Contains(u, "SECRET") || strings.Contains(u, "PASSWORD") || strings.Contains(u, "CREDENTIAL")
}

// Token shapes that may hide inside ordinary values (an agent command with an
// inline key, a URL with a password). Immutable after init.
var (
	tokenRE    = regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]+|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}`)
	userinfoRE = regexp.MustCompile(`(://[^/@\s:]+:)[^/@\s]+@`)
	assignRE   = regexp.MustCompile(`(?i)\b([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD)[A-Z0-9_]*=)[^\s'"]+`)
)

// scrub masks token-looking substrings of a value that is not itself secret.
func scrub(v string) string {
	v = tokenRE.ReplaceAllString(v, redactedText)
	v = userinfoRE.ReplaceAllString(v, "${1}"+redactedText+"@")
	return assignRE.ReplaceAllString(v, "${1}"+redactedText)
}
