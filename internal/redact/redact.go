// Package redact is the one place that decides what of a text is a secret.
// Everything ralph writes or passes on — state files, logs, metrics, its own
// output, doctor, the loop context handed to the next agent call — goes
// through String (or Bytes, or a Writer) first.
//
// Two kinds of secret are masked with "[redacted]":
//   - by value, every secret ralph knows: the values of secret-named
//     environment variables and .ralphrc keys (IsSecretName) and the
//     integrations' tokens, registered with Add, whatever their shape;
//   - by shape, what looks like a credential (token prefixes such as ghp_ or
//     sk-, Bearer and Authorization headers, NAME=value assignments of
//     secret-named variables, private keys, passwords in URLs).
//
// Known values are process-wide on purpose: a secret learnt while reading
// the configuration must be masked in text that code far away writes.
package redact

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// MinValueLen is the shortest known secret masked by value. Masking every
// "ab" in a text would garble it and show where the secret is anyway, so a
// shorter value is left to the shape rules.
const MinValueLen = 4

var known struct {
	sync.RWMutex
	values []string // longest first, so a secret containing another is masked whole
}

// Add registers secret values to be masked wherever they appear. Values
// shorter than MinValueLen and the mask itself are ignored. Their JSON
// spelling is registered too, so a value with quotes or backslashes is
// masked inside JSON text.
func Add(values ...string) {
	known.Lock()
	defer known.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < MinValueLen || strings.Contains(Mask, v) || notSecret[strings.ToLower(v)] {
			continue
		}
		forms := []string{v}
		if b, err := json.Marshal(v); err == nil {
			if q := string(b[1 : len(b)-1]); q != v {
				forms = append(forms, q)
			}
		}
		for _, f := range forms {
			if !slices.Contains(known.values, f) {
				known.values = append(known.values, f)
			}
		}
	}
	slices.SortStableFunc(known.values, func(a, b string) int { return len(b) - len(a) })
}

// AddEnviron registers the values of the secret-named variables of an
// environment (os.Environ's form).
func AddEnviron(environ []string) {
	var vals []string
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && IsSecretName(k) {
			vals = append(vals, v)
		}
	}
	Add(vals...)
}

// notSecret are values of secret-named variables that are switches, not
// secrets (SOME_TOKEN_AUTH=true): masking every "true" would garble all
// output and reveal nothing.
var notSecret = map[string]bool{"true": true, "false": true, "null": true, "none": true, "unset": true}

// reset forgets every known value; for tests.
func reset() {
	known.Lock()
	known.values = nil
	known.Unlock()
}

// IsSecretName says whether a variable name looks like it holds a
// credential: ANTHROPIC_API_KEY, GITHUB_TOKEN, E2B_API_KEY,
// AWS_SECRET_ACCESS_KEY, SLACK_BOT_TOKEN, DB_PASSWORD, ...
func IsSecretName(name string) bool {
	u := strings.ToUpper(name)
	return strings.HasSuffix(u, "_KEY") || strings.HasSuffix(u, "_TOKEN") || strings.HasSuffix(u, "APIKEY") ||
		strings.HasSuffix(u, "_PAT") || strings.Contains(u, "SECRET") || strings.Contains(u, "PASSWORD") ||
		strings.Contains(u, "CREDENTIAL")
}

// String masks every known secret value and every secret shape in s. It is
// idempotent.
func String(s string) string {
	known.RLock()
	for _, v := range known.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	known.RUnlock()
	return shapes(s)
}

// Bytes is String for bytes.
func Bytes(b []byte) []byte { return []byte(String(string(b))) }

// JSON masks the secrets in a JSON document and keeps it valid JSON: text
// masking cannot break a string in the common case, and when it would (a
// shape rule eating a backslash escape) every string of the decoded
// document is masked instead. Input that is not JSON is masked as text.
func JSON(data []byte) []byte {
	out := Bytes(data)
	if bytes.Equal(out, data) || json.Valid(out) || !json.Valid(data) {
		return out
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return out
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return out
	}
	if bytes.HasSuffix(data, []byte{'\n'}) {
		b = append(b, '\n')
	}
	return b
}

func walk(v any) any {
	switch x := v.(type) {
	case string:
		return String(x)
	case []any:
		for i := range x {
			x[i] = walk(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = walk(e)
		}
	}
	return v
}
