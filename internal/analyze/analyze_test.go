package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)

func run(t *testing.T, input string, opts ...func(*Options)) map[string]any {
	t.Helper()
	o := Options{ExitCode: -1, Now: testNow}
	for _, f := range opts {
		f(&o)
	}
	a, err := Analyze(strings.NewReader(input), o)
	if err != nil {
		t.Fatal(err)
	}
	return toJSONMap(t, a)
}

func exitCode(n int) func(*Options) { return func(o *Options) { o.ExitCode = n } }

// Lines of a Claude stream-json transcript.
func sInit(id string) string {
	return fmt.Sprintf(`{"type":"system","subtype":"init","session_id":%q,"tools":["Bash"]}`, id)
}
func sText(msgID, text string) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":[{"type":"text","text":%q}],"usage":{"input_tokens":10,"output_tokens":5}}}`, msgID, text)
}
func sTool(msgID, name, input string) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":[{"type":"tool_use","id":"tu","name":%q,"input":%s}]}}`, msgID, name, input)
}
func sResult(content string, isError bool) string {
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu","is_error":%v,"content":%q}]}}`, isError, content)
}
func sFinal(text string, extra string) string {
	return fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"result":%q,"session_id":"s-final","total_cost_usd":0.5,"usage":{"input_tokens":100,"output_tokens":50,"cache_read_input_tokens":20,"cache_creation_input_tokens":3}%s}`, text, extra)
}

func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

const block = "\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nTESTS_STATUS: PASSING\n---END_RALPH_STATUS---"

func TestAnalyzeCases(t *testing.T) {
	cases := []struct {
		name   string
		input  string
		opts   []func(*Options)
		expect map[string]any
	}{
		{"tool results are never the agent's words",
			lines(sInit("s1"), sTool("m1", "Read", `{"file_path":"PROMPT.md"}`),
				sResult("Should I stop?\nAll done."+block+"\nYou've hit your 5-hour limit · resets 9pm\nError: from the file", false),
				sText("m2", "Working on the parser.")),
			nil,
			map[string]any{"status_block": nil, "exit_signal": false, "asking_questions": false, "has_completion_signal": false,
				"usage_limit.detected": false, "errors": map[string]any{"len": 0.0}, "format": "stream-json",
				"warnings": map[string]any{"min": 2.0}}},
		{"failed tool results give their error lines",
			lines(sInit("s1"), sTool("m1", "Bash", `{"command":"go build ./..."}`),
				sResult("# ralph\n./main.go:3:1: error: undefined: x\nexit status 1", true), sText("m2", "Fixing it.")),
			nil,
			map[string]any{"errors": []any{"./main.go:3:1: error: undefined: x"}}},
		{"test-only iteration from tool calls",
			lines(sInit("s1"), sTool("m1", "Bash", `{"command":"go test ./..."}`), sResult("ok", false),
				sFinal("All tests pass. Nothing to change.", "")),
			nil,
			map[string]any{"is_test_only": true, "work_type": "TESTING", "tests_status": "PASSING"}},
		{"an edit makes it implementation",
			lines(sInit("s1"), sTool("m1", "Edit", `{"file_path":"a.go","old_string":"x","new_string":"y"}`),
				sTool("m2", "Bash", `{"command":"go test ./..."}`), sFinal("Fixed.", "")),
			nil,
			map[string]any{"is_test_only": false, "work_type": "IMPLEMENTATION", "files_modified": 1.0}},
		{"usage: results summed, repeated result uuid not double counted",
			lines(sInit("s1"), sText("m1", "hi"), sFinal("one", `,"uuid":"u1"`), sFinal("one", `,"uuid":"u1"`), sFinal("two", `,"uuid":"u2"`)),
			nil,
			map[string]any{"usage.input_tokens": 200.0, "usage.output_tokens": 100.0, "usage.cache_read_input_tokens": 40.0,
				"usage.cache_creation_input_tokens": 6.0, "usage.cost_usd": 1.0}},
		{"usage without a result: per message, last update wins",
			lines(sInit("s1"), sText("m1", "a"), sText("m1", "b"), sText("m2", "c")),
			nil,
			map[string]any{"usage.input_tokens": 20.0, "usage.output_tokens": 10.0, "session_id": "s1",
				"warnings": map[string]any{"min": 2.0}}},
		{"text blocks of one message join; the final message is judged",
			lines(sInit("s1"), sText("m1", "Should I continue?"), sText("m2", "The work is done."), sText("m2", "Ready for review.")),
			nil,
			map[string]any{"asking_questions": false, "has_completion_signal": true, "summary": "The work is done."}},
		{"CRLF and BOM",
			"\ufeff" + strings.ReplaceAll("Done.\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n---END_RALPH_STATUS---\n", "\n", "\r\n"),
			nil,
			map[string]any{"format": "text", "exit_signal": true, "status": "COMPLETE"}},
		{"pretty-printed flat object",
			"{\n  \"status\": \"BLOCKED\",\n  \"exit_signal\": \"false\",\n  \"tasks_remaining\": 0,\n  \"summary\": \"Need a key\"\n}\n",
			nil,
			map[string]any{"format": "json", "status": "BLOCKED", "exit_signal": false, "exit_signal_explicit": true,
				"tasks_remaining": 0.0, "summary": "Need a key", "completion_indicators": 1.0}},
		{"truncated last line of a transcript",
			lines(sInit("s1"), sText("m1", "Done."+block)) + `{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"half`,
			nil,
			map[string]any{"format": "stream-json", "exit_signal": true, "status": "COMPLETE", "completion_indicators": 3.0}},
		{"JSON array without a result",
			`[{"type":"system","subtype":"init","session_id":"a1"},{"type":"assistant","message":{"content":[{"type":"text","text":"Should I use Redis?"}]}}]`,
			nil,
			map[string]any{"format": "json", "session_id": "a1", "asking_questions": true, "question_count": 1.0}},
		{"explicit EXIT_SIGNAL false with completion wording",
			"All done.\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---",
			nil,
			map[string]any{"exit_signal": false, "exit_signal_explicit": true, "has_completion_signal": true, "completion_indicators": 2.0}},
		{"clarification with several questions",
			"---CLARITY_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nCLARIFICATION_QUESTIONS:\n1. Which DB?\n2. Which port?\nPR_READY: no\n---END_CLARITY_STATUS---",
			nil,
			map[string]any{"clarification_needed": true, "clarification_questions": []any{"Which DB?", "Which port?"},
				"question_count": 2.0, "asking_questions": true, "pr_ready": false}},
		{"ralph block asking for clarification",
			"Which database should I use?\n---RALPH_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---",
			nil,
			map[string]any{"status": "NEEDS_CLARIFICATION", "clarification_needed": true,
				"clarification_questions": []any{"Which database should I use?"}}},
		{"unparseable EXIT_SIGNAL is reported",
			"---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: maybe\n---END_RALPH_STATUS---",
			nil,
			map[string]any{"exit_signal": false, "exit_signal_explicit": false, "warnings": map[string]any{"min": 1.0}}},
		{"limit text in a successful result is not a limit",
			lines(sFinal("Documented it: You've hit your limit · resets 9pm", "")),
			nil,
			map[string]any{"usage_limit.detected": false}},
		{"Gemini 429 JSON on stderr",
			"",
			[]func(*Options){exitCode(173), func(o *Options) {
				o.Stderr = []byte(`{"error":{"type":"Error","message":"You exceeded your current quota. Please retry in 20s.","code":429}}`)
			}},
			map[string]any{"usage_limit.detected": true, "usage_limit.resets_at": "2026-11-20T20:00:20Z", "is_error": true}},
		{"Gemini exit 173 with nothing printed",
			"", []func(*Options){exitCode(173)},
			map[string]any{"usage_limit.detected": true, "usage_limit.kind": "unknown", "usage_limit.message": map[string]any{"contains": "173"}}},
		{"Gemini stream-json error result",
			lines(`{"type":"init","session_id":"g1","model":"m"}`, `{"type":"result","status":"error","error":{"type":"FatalError","message":"Quota exceeded for quota metric"},"stats":{"input_tokens":5,"output_tokens":0}}`),
			nil,
			map[string]any{"is_error": true, "usage_limit.detected": true, "session_id": "g1", "usage.input_tokens": 5.0}},
		{"Codex failed command output",
			lines(`{"type":"thread.started","thread_id":"t1"}`, `{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"bash -lc 'cargo build'","aggregated_output":"error[E0425]: cannot find value\n","exit_code":101,"status":"failed"}}`),
			nil,
			map[string]any{"errors": []any{"error[E0425]: cannot find value"}, "session_id": "t1"}},
		{"Codex file changes",
			lines(`{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"a.go","kind":"add"},{"path":"b.go","kind":"update"}],"status":"completed"}}`),
			nil,
			map[string]any{"work_type": "IMPLEMENTATION", "files_modified": 2.0}},
		{"plain text with a timeout exit is not a limit", "Implementing X...\n", []func(*Options){exitCode(124)},
			map[string]any{"usage_limit.detected": false, "format": "text"}},
		{"old-shape denials in a flat object",
			`{"status":"IN_PROGRESS","permission_denials":[{"tool":"Bash","command":"npm install"},{"tool":"Bash","command":"npm install"}]}`,
			nil,
			map[string]any{"permission_denials": []any{map[string]any{"tool": "Bash", "command": "npm install"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, tc.input, tc.opts...)
			for path, want := range tc.expect {
				if err := match(lookup(got, path), want); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		})
	}
}

func TestOverlongLinesAreSkipped(t *testing.T) {
	huge := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"` +
		strings.Repeat("x", maxLine+10) + `"}]}}`
	in := lines(sInit("s1"), huge, sFinal("Done."+block, ""))
	got := run(t, in)
	for path, want := range map[string]any{"exit_signal": true, "session_id": "s-final", "format": "stream-json"} {
		if err := match(lookup(got, path), want); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	if err := match(lookup(got, "warnings"), map[string]any{"min": 1.0}); err != nil {
		t.Error(err)
	}
}

func TestContractShape(t *testing.T) {
	// Every field of the contract is present, lists are never null.
	got := run(t, "")
	for _, k := range []string{"format", "status_block", "status", "exit_signal", "exit_signal_explicit", "work_type",
		"files_modified", "tasks_completed", "tasks_remaining", "tests_status", "is_test_only", "completion_indicators",
		"has_completion_signal", "asking_questions", "question_count", "clarification_needed", "clarification_questions",
		"pr_ready", "errors", "is_error", "permission_denials", "usage_limit", "session_id", "usage", "summary",
		"recommendation", "warnings"} {
		if _, ok := got[k]; !ok {
			t.Errorf("field %s missing", k)
		}
	}
	for _, k := range []string{"errors", "clarification_questions", "permission_denials", "warnings"} {
		if _, ok := got[k].([]any); !ok {
			t.Errorf("%s = %#v, want a list", k, got[k])
		}
	}
	for _, k := range []string{"files_modified", "tasks_completed", "tasks_remaining"} {
		if got[k] != -1.0 {
			t.Errorf("%s = %v, want -1", k, got[k])
		}
	}
}

// An assistant message's text is decoded into a buffer that the next message
// reuses: what the analysis keeps from it (errors, the limit message, status
// block fields, a promise) must not change when later messages are read.
func TestKeptWordsOutliveTheirMessage(t *testing.T) {
	first := "Error: the first failure\nweekly limit reached, resets 9pm\n" +
		"---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nWORK_TYPE: TESTING\n---END_RALPH_STATUS---"
	in := []string{sText("m1", first), sText("m2", "<promise>DONE</promise>")}
	for i := range 5 { // the same length or shorter: the buffer is reused, not grown
		in = append(in, sText(fmt.Sprintf("n%d", i), strings.Repeat("z", len(first)-i)))
	}
	a, err := Analyze(strings.NewReader(lines(in...)), Options{ExitCode: 0, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Errors) != 1 || a.Errors[0] != "Error: the first failure" {
		t.Errorf("errors %q", a.Errors)
	}
	if a.UsageLimit.Message != "weekly limit reached, resets 9pm" {
		t.Errorf("limit message %q", a.UsageLimit.Message)
	}
	if a.StatusBlock == nil || a.StatusBlock.Fields["PROMISE"] != "DONE" {
		t.Errorf("status block %+v", a.StatusBlock)
	}
	in = append(in[:1], in[2:]...) // without the promise, the delimited block is the last
	a, _ = Analyze(strings.NewReader(lines(in...)), Options{ExitCode: 0, Now: testNow})
	if a.StatusBlock == nil || a.StatusBlock.Fields["STATUS"] != "IN_PROGRESS" || a.StatusBlock.Fields["WORK_TYPE"] != "TESTING" {
		t.Errorf("status block %+v", a.StatusBlock)
	}
}
