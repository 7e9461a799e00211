package agent

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestLiveEventString(t *testing.T) {
	tests := []struct {
		ev   LiveEvent
		want string
	}{
		{LiveEvent{Kind: LiveTool, Tool: "Write", Target: "hello.txt"}, "⚡ Write hello.txt\n"},
		{LiveEvent{Kind: LiveTool, Tool: "TodoWrite"}, "⚡ TodoWrite\n"},
		{LiveEvent{Kind: LiveText, Text: "I'll create the file."}, "I'll create the file.\n"},
		{LiveEvent{Kind: LiveText, Text: "two\nlines\n"}, "two\nlines\n"},
		{LiveEvent{Kind: LiveOutput, Text: "plain"}, "plain\n"},
		{LiveEvent{Kind: LiveError, Text: "API Error: 529 Overloaded"}, "✖ API Error: 529 Overloaded\n"},
	}
	for _, tt := range tests {
		if got := tt.ev.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.ev, got, tt.want)
		}
	}
}

func TestShortTarget(t *testing.T) {
	long := strings.Repeat("abcdefghij", 10)
	tests := []struct{ in, want string }{
		{"go test ./...", "go test ./..."},
		{"  spaced   out  ", "spaced out"},
		{"cat <<EOF > x\nbody\nEOF", "cat <<EOF > x …"},
		{long, long[:MaxTargetLen-1] + "…"},
		{strings.Repeat("é", 100), strings.Repeat("é", MaxTargetLen-1) + "…"},
	}
	for _, tt := range tests {
		got := ShortTarget(tt.in)
		if got != tt.want {
			t.Errorf("ShortTarget(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if n := utf8.RuneCountInString(got); n > MaxTargetLen {
			t.Errorf("ShortTarget(%q) has %d characters", tt.in, n)
		}
	}
}

// lockedBuilder fails the race detector if RenderLive did not serialise.
type lockedBuilder struct{ strings.Builder }

func TestRenderLiveConcurrent(t *testing.T) {
	var b lockedBuilder
	render := RenderLive(&b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				render(LiveEvent{Kind: LiveTool, Tool: "Bash", Target: "go test ./..."})
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if l != "⚡ Bash go test ./..." {
			t.Fatalf("torn line %q", l)
		}
	}
}
