package redact

import (
	"bytes"
	"strings"
	"testing"
)

// stream plays pieces through a Stream and returns all it passed on.
func stream(pieces ...string) string {
	var s Stream
	var out bytes.Buffer
	for _, p := range pieces {
		out.Write(s.Next([]byte(p)))
	}
	out.Write(s.End())
	return out.String()
}

// Wherever the text is cut, in two or three pieces, a secret is masked
// whole and everything else passes unchanged: a value that begins another
// (abcd, abcdefgh), one whose end begins another (secret99, 99abcd), one
// at the very start and end, one in its JSON spelling.
func TestStreamMasksAcrossPieces(t *testing.T) {
	t.Cleanup(reset)
	reset()
	Add("abcdefgh", "abcd", "secret99", "99abcz", "q\"uo\\te")
	text := `abcdefgh x abcd y secret99 z 99abcz {"m":"q\"uo\\te"} abcXdefg abc 99ab secret9 abcd`
	want := `[redacted] x [redacted] y [redacted] z [redacted] {"m":"[redacted]"} abcXdefg abc 99ab secret9 [redacted]`
	if got := stream(text); got != want {
		t.Fatalf("one piece:\n got %q\nwant %q", got, want)
	}
	for i := 0; i <= len(text); i++ {
		if got := stream(text[:i], text[i:]); got != want {
			t.Fatalf("cut at %d (%q|%q):\n got %q\nwant %q", i, text[:i], text[i:], got, want)
		}
		for j := i; j <= len(text); j += 3 {
			if got := stream(text[:i], text[i:j], text[j:]); got != want {
				t.Fatalf("cut at %d and %d:\n got %q\nwant %q", i, j, got, want)
			}
		}
	}
}

// Only what may begin a secret is held back: a line that ends is passed
// on whole at once, so a follower of the log sees it.
func TestStreamHoldsOnlyAPossibleSecret(t *testing.T) {
	t.Cleanup(reset)
	reset()
	Add("s3cretvalue")
	var s Stream
	for _, tc := range []struct{ in, out string }{
		{"line one\n", "line one\n"},
		{"then s3cr", "then "},
		{"etvalue and s", "[redacted] and "},
		{"o on\n", "so on\n"},
		{"last s3", "last "},
	} {
		if got := string(s.Next([]byte(tc.in))); got != tc.out {
			t.Fatalf("Next(%q) = %q, want %q", tc.in, got, tc.out)
		}
	}
	if got := string(s.End()); got != "s3" {
		t.Fatalf("End() = %q", got)
	}
}

// A secret of digits is left to the JSON-aware masks: masked by value in
// a stream it would break a JSON number of the agent's output.
func TestStreamLeavesNumbers(t *testing.T) {
	t.Cleanup(reset)
	reset()
	Add("123456", "tok3n-value")
	in := `{"duration_ms":123456,"result":"tok3n-value"}`
	if got := stream(in); got != `{"duration_ms":123456,"result":"[redacted]"}` {
		t.Fatalf("got %s", got)
	}
	if got := Values("pin 123456"); got != "pin [redacted]" {
		t.Fatalf("Values: %q", got)
	}
}

func BenchmarkStream(b *testing.B) {
	b.Cleanup(reset)
	reset()
	Add("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "plainservicetoken42", "rcvalue77rcvalue77")
	line := []byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("Reading the file and editing it. ", 60) + `"}]}}` + "\n")
	chunk := bytes.Repeat(line, 64<<10/len(line))
	b.SetBytes(int64(len(chunk)))
	var s Stream
	for b.Loop() {
		_ = s.Next(chunk)
	}
}
