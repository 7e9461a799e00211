package activity

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestEventString(t *testing.T) {
	tests := []struct {
		ev   Event
		want string
	}{
		{Event{Kind: Tool, Tool: "Write", Target: "hello.txt"}, "⚡ Write hello.txt\n"},
		{Event{Kind: Tool, Tool: "TodoWrite"}, "⚡ TodoWrite\n"},
		{Event{Kind: Text, Text: "I'll create the file."}, "I'll create the file.\n"},
		{Event{Kind: Text, Text: "two\nlines\n"}, "two\nlines\n"},
		{Event{Kind: Output, Text: "plain"}, "plain\n"},
		{Event{Kind: Error, Text: "API Error: 529 Overloaded"}, "✖ API Error: 529 Overloaded\n"},
		{Event{Kind: ToolResult, Text: "l1\nl2 (3 more lines)"}, "  ↳ l1\n    l2 (3 more lines)\n"},
		{Event{Kind: Summary, Text: "result: success · 2 turns"}, "── result: success · 2 turns\n"},
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

func TestToolTarget(t *testing.T) {
	tests := []struct{ input, want string }{
		{`{"file_path":"/proj/a/b.go"}`, "a/b.go"},
		{`{"filePath":"/proj/a.go"}`, "a.go"},
		{`{"absolute_path":"/elsewhere/a.go"}`, "/elsewhere/a.go"},
		{`{"notebook_path":"/proj/n.ipynb"}`, "n.ipynb"},
		{`{"skill":"pdf"}`, "pdf"},
		{`{"file_path":"/proj/../x"}`, "/proj/../x"},
		{`{"command":"go test ./...","description":"run tests"}`, "go test ./..."},
		{`{"pattern":"TODO","path":"/proj/src"}`, "TODO in src"},
		{`{"dir_path":"/proj/src"}`, "src"},
		{`{"url":"https://example.org"}`, "https://example.org"},
		{`{"todos":[{},{},{}]}`, "3 todos"},
		{`{"x":1}`, ""},
		{`[1]`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := ToolTarget(json.RawMessage(tt.input), "/proj"); got != tt.want {
			t.Errorf("ToolTarget(%s) = %q, want %q", tt.input, got, tt.want)
		}
	}
}

func TestRelPath(t *testing.T) {
	for _, tt := range [][3]string{
		{"/proj/a/b.go", "/proj", "a/b.go"}, {"/etc/hosts", "/proj", "/etc/hosts"}, {"/proj", "/proj", "."},
		{"rel/x", "/proj", "rel/x"}, {"/proj/x", "", "/proj/x"}, {"/projx/y", "/proj", "/projx/y"},
	} {
		if got := RelPath(tt[0], tt[1]); got != tt[2] {
			t.Errorf("RelPath(%q, %q) = %q, want %q", tt[0], tt[1], got, tt[2])
		}
	}
}

func TestShorten(t *testing.T) {
	long := strings.Repeat("é", 200)
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"", 1, ""},
		{"\n\n  \n", 1, ""},
		{"one", 1, "one"},
		{"one\n", 1, "one"},
		{"one\ntwo\nthree", 1, "one (2 more lines)"},
		{"one\ntwo\nthree", 3, "one\ntwo\nthree"},
		{"one  \r\ntwo", 1, "one (1 more line)"},
		{long, 1, strings.Repeat("é", maxResultWidth-1) + "…"},
	}
	for _, tt := range tests {
		if got := shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// A sink drops errors that only repeat, leaves out tool results when none
// are asked for, and says nothing for empty parts.
func TestSink(t *testing.T) {
	tests := []struct {
		name  string
		lines int
		do    func(s *Sink)
		want  []string
	}{
		{"an error repeating the last words", 1, func(s *Sink) {
			s.Text("Limit reached. ")
			s.Error(" Limit reached.")
			s.Error("other")
			s.Error("other")
			s.Error("  ")
		}, []string{"Limit reached. \n", "✖ other\n"}},
		{"blank text", 1, func(s *Sink) { s.Text(" \n") }, nil},
		{"results left out", 0, func(s *Sink) {
			s.Result("body", "")
			s.Result("", "error")
		}, nil},
		{"results cut", 2, func(s *Sink) {
			s.Result("a\nb\nc", "exit 1")
			s.Result("", "error")
			s.Result("\n", "")
		}, []string{"  ↳ ✖ exit 1: a\n    b (1 more line)\n", "  ↳ ✖ error\n"}},
		{"summaries", 1, func(s *Sink) {
			s.Summary("", "")
			s.Summary("result: success", Count(0, "turn"), Count(2, "turn"), Millis(1500), Tokens(0, 0, 0, 0), Tokens(1, 2, 3, 0))
			s.Summary(Tokens(1, 2, 3, 4), Millis(0))
		}, []string{"── result: success · 2 turns · 1.5s · 1 in / 2 out tokens (3 cached)\n",
			"── 1 in / 2 out tokens (3 cache read, 4 cache write)\n"}},
		{"text lines pass as output, blank ones not", 1, func(s *Sink) {
			if b, ok := s.Object([]byte("  plain  ")); ok || b != nil {
				t.Errorf("text read as an object")
			}
			if _, ok := s.Object([]byte(" ")); ok {
				t.Errorf("blank read as an object")
			}
			if b, ok := s.Object([]byte(` {"a":1} `)); !ok || string(b) != `{"a":1}` {
				t.Errorf("object = %q, %v", b, ok)
			}
		}, []string{"plain\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			tt.do(NewSink(Options{ResultLines: tt.lines}, func(e Event) { got = append(got, e.String()) }))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLiveOnly(t *testing.T) {
	var got []Kind
	emit := LiveOnly(func(e Event) { got = append(got, e.Kind) })
	for _, k := range []Kind{Text, ToolResult, Tool, Summary, Output, Error} {
		emit(Event{Kind: k})
	}
	if want := []Kind{Text, Tool, Output, Error}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// lockedBuilder fails the race detector if Render did not serialise.
type lockedBuilder struct{ strings.Builder }

func TestRenderConcurrent(t *testing.T) {
	var b lockedBuilder
	render := Render(&b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				render(Event{Kind: Tool, Tool: "Bash", Target: "go test ./..."})
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
