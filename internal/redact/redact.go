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
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// MinValueLen is the shortest known secret masked by value. Masking every
// "ab" in a text would garble it and show where the secret is anyway, so a
// shorter value is left to the shape rules.
const MinValueLen = 4

var known struct {
	sync.RWMutex
	values []string // longest first, so a secret containing another is masked whole
	// bytes are values as bytes, in the same order, for Stream and
	// ValuesBytes.
	bytes []knownBytes
}

type knownBytes struct {
	v []byte
	// number is set for a value made of digits and time punctuation,
	// which a Stream leaves alone.
	number bool
}

// Add registers secret values to be masked wherever they appear. Values
// shorter than MinValueLen and the mask itself are ignored. Their JSON
// spelling is registered too, so a value with quotes or backslashes is
// masked inside JSON text.
func Add(values ...string) {
	known.Lock()
	defer known.Unlock()
	added := false
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
				added = true
			}
		}
	}
	if !added {
		return // the same values again: every agent call registers its environment's
	}
	slices.SortStableFunc(known.values, func(a, b string) int { return len(b) - len(a) })
	knownGen.Add(1)
	known.bytes = known.bytes[:0]
	for _, v := range known.values {
		known.bytes = append(known.bytes, knownBytes{v: []byte(v), number: timeLike(v)})
	}
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
	known.values, known.bytes = nil, nil
	knownGen.Add(1)
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
	if len(s) > memoMaxLen {
		return shapes(Values(s))
	}
	gen := knownGen.Load()
	memo.Lock()
	out, ok := memo.m[s]
	ok = ok && memo.gen == gen
	memo.Unlock()
	if ok {
		return out
	}
	out = shapes(Values(s))
	memo.Lock()
	defer memo.Unlock()
	if knownGen.Load() != gen {
		return out // a value learnt meanwhile: not for the memo
	}
	if memo.gen != gen || memo.size+len(s)+len(out) > memoMaxSize {
		memo.m, memo.gen, memo.size = nil, gen, 0
	}
	if memo.m == nil {
		memo.m = map[string]string{}
	}
	memo.m[s] = out
	memo.size += len(s) + len(out)
	return out
}

// A loop masks much the same text at every save (the state document holds
// the calls and records of earlier iterations; the status repeats), and the
// shape rules are regular expressions: String remembers what it masked
// lately, for as long as the known values stay the same (knownGen counts
// their changes).
var (
	knownGen atomic.Uint64
	memo     struct {
		sync.Mutex
		gen  uint64
		m    map[string]string
		size int // bytes of keys and values, bounded by memoMaxSize
	}
)

const (
	memoMaxLen  = 64 << 10
	memoMaxSize = 4 << 20
)

// Values masks the known secret values in s and nothing else, leaving the
// text's form alone outside them: what a CI system does to its logs. Text
// that must stay byte for byte what it was but for the secrets (an agent's
// output, a rendered page) goes through Values or a Stream.
func Values(s string) string {
	known.RLock()
	defer known.RUnlock()
	for _, v := range known.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// Bytes is String for bytes.
func Bytes(b []byte) []byte { return []byte(String(string(b))) }

// JSON masks the secrets in a JSON document and keeps it valid JSON, byte
// for byte where nothing is masked: each string value is masked on its own
// (a value whose key names a credential, "api_key": "…", whole), so the
// shape rules never scan the document's structure — a state file full of
// "input_tokens" keys is not a reason to run them. Input that is not JSON
// is masked as text.
func JSON(data []byte) []byte {
	if !json.Valid(data) {
		return Bytes(data)
	}
	return maskValues(data)
}

// Encoded is JSON for bytes encoding/json just produced: they are valid by
// construction, so the check JSON makes first is skipped (it was a twelfth
// of a loop's own CPU, run on every state file at every save).
func Encoded(data []byte) []byte {
	return maskValues(data)
}

var secretKey = regexp.MustCompile(`^` + secretName + `$`)

// isSecretKey is secretKey.Match, remembered: a document repeats its few
// keys at every string value, and the expression backtracks.
func isSecretKey(key []byte) bool {
	keyMemo.Lock()
	yes, ok := keyMemo.m[string(key)]
	keyMemo.Unlock()
	if ok {
		return yes
	}
	yes = secretKey.Match(key)
	keyMemo.Lock()
	if keyMemo.m == nil || len(keyMemo.m) >= keyMemoMax {
		keyMemo.m = map[string]bool{}
	}
	keyMemo.m[string(key)] = yes
	keyMemo.Unlock()
	return yes
}

var keyMemo struct {
	sync.Mutex
	m map[string]bool
}

const keyMemoMax = 4096

// maskValues copies valid JSON, replacing the string values that hold a
// secret. One pass over the bytes: strings are found by their quotes, and
// a string followed by ':' is a key.
func maskValues(data []byte) []byte {
	var out []byte // nil until something changes
	last := 0      // data[last:] is not yet in out
	var key []byte // the last key seen
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		end := stringEnd(data, i)
		j := end
		for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
			j++
		}
		if j < len(data) && data[j] == ':' {
			key = data[i+1 : end-1]
			i = end - 1
			continue
		}
		lit := data[i:end]
		var v string
		if bytes.IndexByte(lit, '\\') >= 0 {
			if json.Unmarshal(lit, &v) != nil {
				i = end - 1
				continue
			}
		} else {
			v = string(lit[1 : len(lit)-1])
		}
		var masked string
		switch {
		case v != "" && key != nil && isSecretKey(key):
			masked = Mask
		case timeLike(v):
			// Timestamps and numbers in text hold no secret, and masking a
			// short numeric value inside one would break the document.
			masked = v
		default:
			masked = String(v)
		}
		if masked != v {
			if out == nil {
				out = make([]byte, 0, len(data))
			}
			q, _ := json.Marshal(masked)
			out = append(append(out, data[last:i]...), q...)
			last = end
		}
		key = nil
		i = end - 1
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// timeLike reports text made only of digits and the punctuation of times
// and numbers ("2026-11-25T10:00:00.5Z", "1.5").
func timeLike(v string) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9', c == '-', c == ':', c == '.', c == 'T', c == 'Z', c == '+':
		default:
			return false
		}
	}
	return v != ""
}

// stringEnd is the index just past the string literal starting at data[i].
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}
