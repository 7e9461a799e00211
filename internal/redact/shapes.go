package redact

import (
	"regexp"
	"strings"
)

// Mask replaces every secret.
const Mask = "[redacted]"

// A redaction rule: matches of re become repl. value is the index of the
// submatch holding the secret, for rules that keep a name around it (0: the
// whole match is the secret); tests use it to check that nothing survives.
type redaction struct {
	re    *regexp.Regexp
	repl  string
	value int
	// hints are lower-case substrings one of which every match contains:
	// a text with none of them skips the rule. State files and logs are
	// written often and rarely hold a secret, so most text skips them all.
	hints []string
}

var nameHints = []string{"key", "token", "secret", "password", "passwd", "credential"}

// secretName matches variable, flag and JSON key names that hold
// credentials: *_KEY, *TOKEN (but not MAX_TOKENS_PER_HOUR), anything with
// SECRET, PASSWORD or CREDENTIAL. Case-insensitive, so a few innocent names
// (monkey=) are masked too; hiding a harmless value costs less than leaking
// a key.
const secretName = `[A-Za-z0-9_.-]*(?:(?i:key|token)|(?i:secret|password|passwd|credential)[A-Za-z0-9_]*)`

// Immutable after init. Order matters: whole tokens first, so that a key
// inside an assignment is masked even when the name does not look secret.
var redactions = []redaction{
	// PEM private keys, across lines.
	{re: regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`), repl: Mask, hints: []string{"private key"}},
	// Token shapes of common providers. \b keeps "task-..." from reading as "sk-...".
	{re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]+` + // Anthropic
		`|\bsk-[A-Za-z0-9_-]{16,}` + // OpenAI and look-alikes
		`|\bgh[pousr]_[A-Za-z0-9]{6,}|\bgithub_pat_[A-Za-z0-9_]{6,}` + // GitHub, any real length
		`|\bglpat-[A-Za-z0-9_-]{8,}` + // GitLab
		`|\bxox[abposr]-[A-Za-z0-9-]{6,}|\bxapp-[A-Za-z0-9-]{6,}` + // Slack
		`|\bAKIA[0-9A-Z]{16}` + // AWS access key id
		`|\bAIza[0-9A-Za-z_-]{30,}` + // Google API key
		`|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}` + // JWT
		`|[0-9]{5,12}:AA[A-Za-z0-9_-]{30,}`), // Telegram bot token, also in a Bot API URL (…/bot<token>/…)
		repl: Mask, hints: []string{"sk-", "gh", "github_pat_", "glpat-", "xox", "xapp-", "akia", "aiza", "eyj", ":aa"}},
	// HTTP credentials: "Bearer <token>", "Authorization: Basic <b64>".
	{re: regexp.MustCompile(`(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{8,})`), repl: "${1}" + Mask, value: 2, hints: []string{"bearer"}},
	{re: regexp.MustCompile(`(?i)(\bauthorization\s*:\s*[A-Za-z]+\s+)([A-Za-z0-9._~+/=-]{6,})`), repl: "${1}" + Mask, value: 2, hints: []string{"authorization"}},
	// Any header whose name says it carries a credential, scheme or not:
	// "Authorization: ghp_…", "X-Api-Key: …", "PRIVATE-TOKEN: …".
	{re: regexp.MustCompile(`(?i)(\b(?:authorization|proxy-authorization|[a-z0-9-]*(?:api-?key|token|secret))\s*:\s*)([A-Za-z0-9._~+/=-]{12,})`), repl: "${1}" + Mask, value: 2, hints: []string{"authorization", "key", "token", "secret"}},
	// user:password@ in URLs.
	{re: regexp.MustCompile(`(://[^/@\s:]+:)([^/@\s]+)@`), repl: "${1}" + Mask + "@", value: 2, hints: []string{"://"}},
	// "api_key": "value" in JSON.
	{re: regexp.MustCompile(`("` + secretName + `"\s*:\s*)("(?:[^"\\]|\\.)*")`), repl: `${1}"` + Mask + `"`, value: 2, hints: nameHints},
	// --api-key value, --token=value.
	{re: regexp.MustCompile(`((?:^|\s)--?` + secretName + `(?:\s+|=))([^\s"'-][^\s"']*)`), repl: "${1}" + Mask, value: 2, hints: nameHints},
	// NAME=value as in .env files, shell lines and query strings.
	{re: regexp.MustCompile(`(\b` + secretName + `\s*=\s*)("[^"]*"|'[^']*'|[^\s"'&,;]+)`), repl: "${1}" + Mask, value: 2, hints: nameHints},
}

// shapes masks what looks like a credential whatever its value: API keys,
// tokens, passwords and private keys by their form or by the name next to
// them. It errs on the side of masking: a few harmless values that look like
// credentials are hidden too. It is idempotent.
func shapes(s string) string {
	// One pass almost always suffices; repeating until nothing changes
	// guarantees that a replacement never exposes a new match.
	for range 4 {
		out := s
		lower := strings.ToLower(s)
		for _, r := range redactions {
			if hinted(lower, r.hints) {
				out = r.re.ReplaceAllString(out, r.repl)
			}
		}
		if out == s {
			break
		}
		s = out
	}
	return s
}

func hinted(lower string, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return len(hints) == 0
}
