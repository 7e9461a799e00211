package analyze

import (
	"reflect"
	"strings"
	"testing"
)

// A refused AskUserQuestion (Claude Code in -p mode) is the agent asking
// the person: its questions become clarification questions, and it is not
// counted as a permission denial.
func TestAskUserQuestionDenied(t *testing.T) {
	const ask = `{"tool_name":"AskUserQuestion","tool_use_id":"tu1","tool_input":{"questions":[` +
		`{"question":"Which database should I use?","header":"DB","multiSelect":false,"options":[{"label":"PostgreSQL","description":"the server"},{"label":"SQLite","description":"a file"}]},` +
		`{"question":"Keep the old  API?","header":"API"}]}}`
	const write = `{"tool_name":"Write","tool_use_id":"tu2","tool_input":{"file_path":"a.go","content":"x"}}`
	result := func(text, denials string) string {
		return `{"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":` + quote(text) + `,"permission_denials":[` + denials + `]}`
	}
	both := []string{"Which database should I use? (PostgreSQL / SQLite)", "Keep the old API?"}
	cases := []struct {
		name       string
		input      string
		clarify    bool
		status     string
		questions  []string
		denials    int
		denialTool string
	}{
		{"json result: the questions with their options", result("I need to know a few things.", ask),
			true, StatusNeedsClarification, both, 0, ""},
		{"stream-json: the tool call, its refusal, the result; other denials stay denials",
			lines(sInit("s1"), sTool("m1", "AskUserQuestion", `{"questions":[{"question":"Which database should I use?"}]}`),
				sResult("Claude requested permissions to use AskUserQuestion, but you haven't granted it yet.", true),
				result("Waiting for your answer.", ask+","+write)),
			true, StatusNeedsClarification, both, 1, "Write"},
		{"a status block keeps its status", result("Working.\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---", ask),
			true, StatusInProgress, both, 0, ""},
		{"a question the block already asks is not repeated",
			result("---CLARITY_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nCLARIFICATION_QUESTIONS: Keep the old API?\n---END_CLARITY_STATUS---", ask),
			true, StatusNeedsClarification, []string{"Keep the old API?", "Which database should I use? (PostgreSQL / SQLite)"}, 0, ""},
		{"unreadable questions: nothing asked, nothing denied",
			result("Hm.", `{"tool_name":"AskUserQuestion","tool_input":"what?"},{"tool_name":"AskUserQuestion","tool_input":{"questions":[{"header":"x"},7]}}`),
			false, StatusUnknown, []string{}, 0, ""},
		{"the same refusal twice counts once", result("Hm.", ask+","+ask), true, StatusNeedsClarification, both, 0, ""},
		{"no AskUserQuestion: unchanged", result("Done.", write), false, StatusUnknown, []string{}, 1, "Write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := analyzeString(t, tc.input)
			if a.ClarificationNeeded != tc.clarify || a.Status != tc.status {
				t.Errorf("clarification %v status %s, want %v %s", a.ClarificationNeeded, a.Status, tc.clarify, tc.status)
			}
			if !reflect.DeepEqual(a.ClarificationQuestions, tc.questions) {
				t.Errorf("questions %q, want %q", a.ClarificationQuestions, tc.questions)
			}
			if len(a.PermissionDenials) != tc.denials || (tc.denials > 0 && a.PermissionDenials[0].Tool != tc.denialTool) {
				t.Errorf("denials %+v", a.PermissionDenials)
			}
			if tc.clarify && a.QuestionCount < len(tc.questions) {
				t.Errorf("question count %d", a.QuestionCount)
			}
		})
	}
}

func analyzeString(t *testing.T, input string) *Analysis {
	t.Helper()
	a, err := Analyze(strings.NewReader(input), Options{ExitCode: 0, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
