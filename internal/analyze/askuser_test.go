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
		{"questions of other shapes are never dropped: read where they can be, said where they cannot",
			result("Hm.", `{"tool_name":"AskUserQuestion","tool_input":"what?"},{"tool_name":"AskUserQuestion","tool_input":{"questions":[{"header":"x"},7]}}`),
			true, StatusNeedsClarification, []string{"what?", "the agent asked a question with AskUserQuestion that ralph could not read"}, 0, ""},
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

// A refused question tool is never dropped, whatever the shape of its
// input: the question is read where it can be, and the person is told one
// was asked where it cannot.
func TestAskUserQuestionAnyShape(t *testing.T) {
	const unread = "the agent asked a question with AskUserQuestion that ralph could not read"
	for _, tt := range []struct {
		name, denial, want string
	}{
		{"no input", `{"tool_name":"AskUserQuestion"}`, unread},
		{"input as a JSON string", `{"tool_name":"AskUserQuestion","tool_input":"{\"questions\":[{\"question\":\"Which DB?\"}]}"}`, "Which DB?"},
		{"input as plain text", `{"tool_name":"AskUserQuestion","tool_input":"Which DB?"}`, "Which DB?"},
		{"one question, not a list", `{"tool_name":"AskUserQuestion","tool_input":{"question":"Which DB?"}}`, "Which DB?"},
		{"questions as strings", `{"tool_name":"AskUserQuestion","tool_input":{"questions":["Which DB?"]}}`, "Which DB?"},
		{"options as strings", `{"tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which DB?","options":["pg","lite"]}]}}`, "Which DB? (pg / lite)"},
		{"the older {tool, command} shape", `{"tool":"AskUserQuestion","command":"Which DB?"}`, "Which DB?"},
		{"questions of another shape", `{"tool_name":"AskUserQuestion","tool_input":{"questions":{"q":1}}}`, unread},
		{"empty questions", `{"tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":" "}]}}`, unread},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"type":"result","subtype":"success","is_error":false,"result":"x","permission_denials":[` + tt.denial + `]}`
			a, err := Analyze(strings.NewReader(in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !a.ClarificationNeeded || !reflect.DeepEqual(a.ClarificationQuestions, []string{tt.want}) || len(a.PermissionDenials) != 0 {
				t.Errorf("clarify %v questions %q denials %v, want the question %q", a.ClarificationNeeded, a.ClarificationQuestions, a.PermissionDenials, tt.want)
			}
		})
	}
}

// Token usage is read in every shape the agents and their wrappers write:
// snake or camel case, at the top or under a metadata object.
func TestUsageShapes(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"result usage", `{"type":"result","result":"x","usage":{"input_tokens":5,"output_tokens":7}}`},
		{"result usage in camel case", `{"type":"result","result":"x","usage":{"inputTokens":5,"outputTokens":7}}`},
		{"result usage under metadata", `{"type":"result","result":"x","metadata":{"usage":{"input_tokens":5,"output_tokens":7}}}`},
		{"flat object usage under metadata", `{"status":"IN_PROGRESS","metadata":{"usage":{"input_tokens":5,"output_tokens":7}}}`},
		{"flat object, camel case under metadata", `{"status":"IN_PROGRESS","metadata":{"usage":{"inputTokens":5,"outputTokens":7}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(strings.NewReader(tt.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if a.Usage.InputTokens != 5 || a.Usage.OutputTokens != 7 {
				t.Errorf("usage %+v, want 5 in and 7 out", a.Usage)
			}
		})
	}
}
