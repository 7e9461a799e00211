package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestKnownValues(t *testing.T) {
	t.Cleanup(reset)
	reset()
	AddEnviron([]string{"ACME_DEPLOY_TOKEN=plain42x", "PATH=/usr/bin", "DB_PASSWORD=ab", "MY_PAT=q\"uo\\te", "USE_SECRET_STORE=true"})
	Add("hunter2hunter2", "hunter2")
	tests := []struct{ name, in, want string }{
		{"env secret without a shape", "deploying with plain42x now", "deploying with [redacted] now"},
		{"PATH is not secret", "PATH is /usr/bin", "PATH is /usr/bin"},
		{"a switch is not a secret", "exit_signal true", "exit_signal true"},
		{"too short to mask by value", "ab cd", "ab cd"},
		{"longest first", "pw hunter2hunter2.", "pw [redacted]."},
		{"shorter one alone", "pw hunter2.", "pw [redacted]."},
		{"JSON spelling of a value", `{"m":"q\"uo\\te"}`, `{"m":"[redacted]"}`},
		{"short GitHub token", "token ghp_SECRETSECRET", "token [redacted]"},
		{"Authorization header without scheme", "Authorization: abcdef0123456789abcdef", "Authorization: [redacted]"},
		{"API key header", "X-Api-Key: abcdef0123456789", "X-Api-Key: [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Fatalf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Masking must not break a JSON document: a shape rule that would eat an
// escape makes JSON mask string by string instead.
func TestJSONStaysValid(t *testing.T) {
	for _, in := range []string{
		`{"summary":"PASSWORD=ab\"c and more","n":1}` + "\n",
		`{"a":["Bearer abcdefgh\\\"x"],"b":{"c":"TOKEN=x\\ny"}}`,
		`{"plain":"nothing here"}`,
	} {
		out := JSON([]byte(in))
		if !json.Valid(out) {
			t.Fatalf("JSON(%s) = %s: not valid", in, out)
		}
		if strings.HasSuffix(in, "\n") != bytes.HasSuffix(out, []byte("\n")) {
			t.Errorf("final newline not kept: %q", out)
		}
	}
	if out := JSON([]byte(`{"summary":"PASSWORD=ab\"c"}`)); strings.Contains(string(out), "ab") {
		t.Errorf("secret kept: %s", out)
	}
}

// A secret split across two writes is masked; nothing is lost or held
// after Flush.
func TestWriter(t *testing.T) {
	t.Cleanup(reset)
	reset()
	Add("s3cretvalue")
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, p := range []string{"one s3cr", "etvalue two\nthree ", "s3cretvalue"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got := b.String(); got != "one [redacted] two\n" {
		t.Fatalf("before Flush: %q", got)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "one [redacted] two\nthree [redacted]" {
		t.Fatalf("after Flush: %q", got)
	}
}

func TestJSONMasksValuesAndKeepsTheRest(t *testing.T) {
	tests := []struct{ in, want string }{
		// Nothing to mask: the very same bytes, layout and order kept.
		{"{\n  \"total_tokens\": 12,\n  \"input_tokens\": 3,\n  \"b\": \"x\",\n  \"a\": [1, \"y\"]\n}\n",
			"{\n  \"total_tokens\": 12,\n  \"input_tokens\": 3,\n  \"b\": \"x\",\n  \"a\": [1, \"y\"]\n}\n"},
		// A value whose key names a credential, whatever it looks like.
		{`{"api_key": "hunter2hunter2", "note": "ok"}`, `{"api_key": "[redacted]", "note": "ok"}`},
		// A token shape inside a value, with escapes around it.
		{`{"summary": "used \"ghp_abcdefghijklmnop\"\nthen"}`, `{"summary":"used \"[redacted]\"\nthen"}`},
		// Keys are not values: a key named like a token shape stays.
		{`{"max_tokens_per_hour": 5}`, `{"max_tokens_per_hour": 5}`},
		// A timestamp stays whole even if a short secret's digits are in it.
		{`{"at": "2026-11-25T10:00:00Z"}`, `{"at": "2026-11-25T10:00:00Z"}`},
	}
	for _, tt := range tests {
		got := string(JSON([]byte(tt.in)))
		if strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(tt.want, " ", "") {
			t.Errorf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("JSON(%q) is not valid JSON: %q", tt.in, got)
		}
	}
	if in := []byte(tests[0].in); &JSON(in)[0] != &in[0] {
		t.Error("a document with nothing to mask was copied")
	}
}

// String remembers what it masked, but a value learnt since is masked in
// the same text at once.
func TestStringMasksAValueLearntSince(t *testing.T) {
	reset()
	defer reset()
	const text = "the deploy word is plumtree42, said the log"
	if got := String(text); got != text {
		t.Fatalf("masked before it was known: %q", got)
	}
	Add("plumtree42")
	if got := String(text); got != "the deploy word is [redacted], said the log" {
		t.Errorf("after Add: %q", got)
	}
	Add("plumtree42") // nothing new: what was masked stays remembered
	if got := String(text); got != "the deploy word is [redacted], said the log" {
		t.Errorf("after the same Add: %q", got)
	}
}
