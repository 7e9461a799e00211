package analyze

import (
	"reflect"
	"strings"
	"testing"
)

func parseBlocks(text string) (*StatusBlock, []string) {
	var p blockParser
	for _, l := range strings.Split(text, "\n") {
		p.line(l)
	}
	p.endMessage()
	return p.last, p.notes.list
}

func TestBlockParser(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		dialect string // "" = no block
		fields  map[string]string
	}{
		{"delimited", "x\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---", DialectRalph,
			map[string]string{"STATUS": "COMPLETE", "EXIT_SIGNAL": "true"}},
		{"any order, values trimmed, unknown kept", "---RALPH_STATUS---\n  EXIT_SIGNAL:   false  \nCUSTOM: hi\nSTATUS: in_progress\n---END_RALPH_STATUS---", DialectRalph,
			map[string]string{"STATUS": "in_progress", "EXIT_SIGNAL": "false", "CUSTOM": "hi"}},
		{"markdown decorations", "```\n**---RALPH_STATUS---**\n- **STATUS:** COMPLETE\n* EXIT_SIGNAL: true\n---END_RALPH_STATUS---\n```", DialectRalph,
			map[string]string{"STATUS": "COMPLETE", "EXIT_SIGNAL": "true"}},
		{"multi-line value", "---RALPH_STATUS---\nSTATUS: BLOCKED\nRECOMMENDATION: Ask for the key\n  and the region\n---END_RALPH_STATUS---", DialectRalph,
			map[string]string{"STATUS": "BLOCKED", "RECOMMENDATION": "Ask for the key\nand the region"}},
		{"unterminated is ignored", "---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true", "", nil},
		{"last complete wins over a later unterminated one", "---RALPH_STATUS---\nSTATUS: IN_PROGRESS\n---END_RALPH_STATUS---\n---RALPH_STATUS---\nSTATUS: COMPLETE", DialectRalph,
			map[string]string{"STATUS": "IN_PROGRESS"}},
		{"header form", "RALPH_STATUS:\n  STATUS: COMPLETE\n  EXIT_SIGNAL: true\nafter", DialectRalph,
			map[string]string{"STATUS": "COMPLETE", "EXIT_SIGNAL": "true"}},
		{"header form at end of message", "RALPH_STATUS:\n\tEXIT_SIGNAL: false", DialectRalph,
			map[string]string{"EXIT_SIGNAL": "false"}},
		{"header without indented lines", "RALPH_STATUS:\nSTATUS: COMPLETE", "", nil},
		{"name in a sentence", "Use the ---RALPH_STATUS--- block and RALPH_STATUS: header.\nEXIT_SIGNAL: true", "", nil},
		{"clarity", "---CLARITY_STATUS---\nNEEDS_CLARIFICATION: true\nCLARIFICATION_QUESTIONS:\n- Which DB?\n- Which port?\n---END_CLARITY_STATUS---", DialectClarity,
			map[string]string{"NEEDS_CLARIFICATION": "true", "CLARIFICATION_QUESTIONS": "- Which DB?\n- Which port?"}},
		{"promise", "done\n<promise>COMPLETE</promise>", DialectPromise, map[string]string{"PROMISE": "COMPLETE"}},
		{"promise inline is prose", "Print <promise>COMPLETE</promise> when done.", "", nil},
		{"block without colons", "---RALPH_STATUS---\nSTATUS COMPLETE\n---END_RALPH_STATUS---", "", nil},
		{"foreign dialect", "---STATUS---\nSTATUS: COMPLETE\n---END---", "", nil},
		{"crlf", "---RALPH_STATUS---\r\nSTATUS: COMPLETE\r\n---END_RALPH_STATUS---\r", DialectRalph, map[string]string{"STATUS": "COMPLETE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := parseBlocks(strings.ReplaceAll(tc.text, "\r", ""))
			if tc.dialect == "" {
				if got != nil {
					t.Fatalf("got block %+v, want none", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("no block, want %s", tc.dialect)
			}
			if got.Dialect != tc.dialect || !reflect.DeepEqual(got.Fields, tc.fields) {
				t.Errorf("got %s %q, want %s %q", got.Dialect, got.Fields, tc.dialect, tc.fields)
			}
		})
	}
}

func TestBlockWarnings(t *testing.T) {
	_, notes := parseBlocks("---STATUS---\nSTATUS: COMPLETE\n---END---")
	if len(notes) != 1 || !strings.Contains(notes[0], "not a ralph dialect") {
		t.Errorf("notes = %q", notes)
	}
	_, notes = parseBlocks("---RALPH_STATUS---\nSTATUS: COMPLETE")
	if len(notes) != 1 || !strings.Contains(notes[0], "unterminated") {
		t.Errorf("notes = %q", notes)
	}
}

func TestDenialFilter(t *testing.T) {
	cases := []struct {
		allowed string
		denied  Denial
		kept    bool
	}{
		{"Bash(mvn *)", Denial{"Bash", "mvn clean compile 2>&1 | tail -40"}, false},
		{"Bash(git diff *)", Denial{"Bash", "git diff HEAD | head"}, false},
		{"Bash(git diff *)", Denial{"Bash", "git push --force | tee push.log"}, true},
		{"Bash(git diff *)", Denial{"Bash", "git diffstat"}, true},
		{"Bash(git diff:*)", Denial{"Bash", "git diff --stat > out.txt"}, false},
		{"Bash(npm run test:*)", Denial{"Bash", "npm run test:unit && echo ok"}, false},
		{"Bash", Denial{"Bash", "rm -rf build; make"}, false},
		{"Bash(go test *)", Denial{"Bash", "CGO_ENABLED=0 go test ./... | tee log"}, false},
		{"Write,Read", Denial{"Bash", "npm install"}, true},
		{"Write", Denial{"Write", ""}, true}, // a Write refused outside the project stays a denial
		{"", Denial{"Bash", "ls | wc -l"}, true},
	}
	for _, tc := range cases {
		kept, warns := filterDenials([]Denial{tc.denied}, SplitToolList(tc.allowed))
		if got := len(kept) == 1; got != tc.kept {
			t.Errorf("allowed %q, denied %v: kept = %v, want %v (warnings %q)", tc.allowed, tc.denied, got, tc.kept, warns)
		}
		if !tc.kept && len(warns) != 1 {
			t.Errorf("allowed %q, denied %v: want one warning, got %q", tc.allowed, tc.denied, warns)
		}
	}
}

func TestSplitToolList(t *testing.T) {
	got := SplitToolList("Write, Read,Bash(git diff *) Bash(git log:*),,Edit")
	want := []string{"Write", "Read", "Bash(git diff *)", "Bash(git log:*)", "Edit"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
