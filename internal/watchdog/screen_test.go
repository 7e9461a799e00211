package watchdog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func screen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "screens", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Captured screens, each with what the watchdog must make of it.
func TestParseScreens(t *testing.T) {
	cases := []struct {
		file         string
		fields       map[string]string // nil: no block
		line         int
		claude, busy bool
		exit         bool
	}{
		{file: "claude_frame.txt", claude: true, line: 36,
			fields: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "WORK_TYPE": "IMPLEMENTATION", "FILES_MODIFIED": "2", "TASKS_REMAINING": "2"}},
		// Two blocks: the last one counts.
		{file: "claude_two_blocks.txt", claude: true, line: 24, exit: true,
			fields: map[string]string{"STATUS": "COMPLETE", "EXIT_SIGNAL": "true", "WORK_TYPE": "IMPLEMENTATION", "FILES_MODIFIED": "2", "TASKS_REMAINING": "0", "TESTS_STATUS": "PASSING"}},
		// The tail of a block whose beginning scrolled off is no block.
		{file: "claude_half_scrolled.txt", claude: true},
		// A block a person quoted in a prompt, or is typing in the input
		// box, is not the agent's: the agent's own earlier block counts.
		{file: "claude_prompt_quote.txt", claude: true, line: 3,
			fields: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "FILES_MODIFIED": "1", "TASKS_REMAINING": "2"}},
		// The task file shown by a tool, a block a command printed: not
		// the agent's word.
		{file: "claude_echo_tool.txt", claude: true},
		{file: "claude_busy.txt", claude: true, busy: true, line: 3,
			fields: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "FILES_MODIFIED": "1", "TASKS_REMAINING": "2"}},
		// Claude Code's own wrapping continues the value on the next line;
		// the header form of the seed; the newer frame with rules and ●.
		{file: "claude_wrapped.txt", claude: true, line: 4,
			fields: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "WORK_TYPE": "IMPLEMENTATION", "FILES_MODIFIED": "4", "TASKS_REMAINING": "1",
				"RECOMMENDATION": "Clear the session cookie on logout, then run the integration\ntests against a real database before ticking the last item"}},
		{file: "claude_promise.txt", claude: true, line: 3, exit: true, fields: map[string]string{"PROMISE": "COMPLETE"}},
		// A plain terminal: the seed's unindented header block.
		{file: "plain_seed.txt", line: 5,
			fields: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "WORK_TYPE": "feature", "FILES_MODIFIED": "5", "TASKS_REMAINING": "2"}},
		// The same lines under the task file's "## RALPH_STATUS" heading.
		{file: "plain_task_file.txt"},
		{file: "plain_crlf.txt", line: 3, fields: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "FILES_MODIFIED": "1"}},
		// A capture whose lines tmux wrapped at the pane's width.
		{file: "plain_wrapped.txt", line: 3,
			fields: map[string]string{"STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "FILES_MODIFIED": "2",
				"RECOMMENDATION": "Add the logout endpoint next, then write the integration tests f\nor the session store and the login flow"}},
		{file: "empty.txt"},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.file, ".txt"), func(t *testing.T) {
			s := Parse(screen(t, tc.file))
			if s.Claude != tc.claude || s.Busy != tc.busy {
				t.Errorf("claude %v busy %v, want %v %v", s.Claude, s.Busy, tc.claude, tc.busy)
			}
			if tc.fields == nil {
				if s.Block != nil {
					t.Fatalf("block %+v at line %d, want none", s.Block.Fields, s.Block.Line)
				}
				return
			}
			b := s.Block
			if b == nil {
				t.Fatalf("no block, want %v", tc.fields)
			}
			if len(b.Fields) != len(tc.fields) {
				t.Errorf("fields %q, want %q", b.Fields, tc.fields)
			}
			for k, v := range tc.fields {
				if b.Fields[k] != v {
					t.Errorf("%s = %q, want %q", k, b.Fields[k], v)
				}
			}
			if b.Line != tc.line {
				t.Errorf("line %d, want %d", b.Line, tc.line)
			}
			if b.Analysis == nil || b.Analysis.ExitSignal != tc.exit {
				t.Errorf("exit signal: %+v, want %v", b.Analysis, tc.exit)
			}
			if b.Key == "" {
				t.Error("no key")
			}
		})
	}
}

// The key tells a block printed again in a later message from the same
// block seen again; it survives scrolling while its message is on the
// screen, and says when its context is cut off.
func TestBlockKey(t *testing.T) {
	msg := func(words string) string {
		return "⏺ " + words + "\n\n  ---RALPH_STATUS---\n  STATUS: IN_PROGRESS\n  EXIT_SIGNAL: false\n  ---END_RALPH_STATUS---\n"
	}
	one := Parse(msg("Tried the build.")).Block
	scrolled := Parse("  old lines\n  of a message\n\n> go on\n\n" + msg("Tried the build.") + "\n> \n").Block
	again := Parse(msg("Tried the build.") + "\n> go on\n\n" + msg("Tried the build again.")).Block
	if one == nil || scrolled == nil || again == nil {
		t.Fatal("no block")
	}
	if one.Key != scrolled.Key || !one.Whole {
		t.Errorf("the same message moved on the screen changed its key")
	}
	if again.Key == one.Key {
		t.Errorf("the same block in a new message kept the old key")
	}
	plain := "a\nb\nc\nd\ne\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\n---END_RALPH_STATUS---\n"
	if b := Parse(plain).Block; b == nil || !b.Whole {
		t.Errorf("five lines of context: %+v", b)
	}
	if b := Parse(plain[4:]).Block; b == nil || b.Whole || b.Line != 4 {
		t.Errorf("context cut off by the top of the capture: %+v", b)
	}
}

func FuzzParse(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "screens"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join("testdata", "screens", e.Name()))
		f.Add(string(b))
	}
	f.Add("RALPH_STATUS:\nSTATUS: X\n")
	f.Add("⏺ ---RALPH_STATUS---\n  STATUS: COMPLETE\n  ---END_RALPH_STATUS---")
	f.Fuzz(func(t *testing.T, capture string) {
		s := Parse(capture)
		if s.Block == nil {
			return
		}
		n := len(strings.Split(capture, "\n"))
		if s.Block.Line < 1 || s.Block.Line > n {
			t.Errorf("line %d of %d", s.Block.Line, n)
		}
		if len(s.Block.Fields) == 0 || s.Block.Key == "" || s.Block.Analysis == nil {
			t.Errorf("incomplete block %+v", s.Block)
		}
		// Parsing is a function of the text.
		if again := Parse(capture); again.Block == nil || again.Block.Key != s.Block.Key {
			t.Errorf("a second parse differs")
		}
	})
}
