package analyze

import (
	"fmt"
	"strings"
	"testing"
)

// Principles held beyond the shared conformance cases.

// Every error pattern of the bash tool's two-stage error detection
// (stage 2: ^Error:, ^ERROR:, ^error:, ]: error, Link: error, Error occurred,
// failed with error, [Ee]xception, Fatal, FATAL) counts as an error line; its
// stage 1 (JSON keys holding "error") and ralph's own look-alikes do not.
func TestBashErrorPatternsAreErrors(t *testing.T) {
	cases := []struct {
		pattern, line string
		want          bool
	}{
		{"^Error:", "Error: cannot open config.yaml", true},
		{"^ERROR:", "ERROR: relation \"users\" does not exist", true},
		{"^error:", "error: pathspec 'main.go' did not match any file", true},
		{`\]: error`, "[2026-11-20 10:00:00]: error connecting to the database", true},
		{"Link: error", "Link: error LNK2019: unresolved external symbol main", true},
		{"Link: error", "build.log Link: error: cannot open output file app.exe", true},
		{"Error occurred", "Error occurred while building the project", true},
		{"Error occurred", "deploy: an unexpected Error occurred in step 3", true},
		{"failed with error", "The container failed with error code 137", true},
		{"[Ee]xception", "Exception: division by zero", true},
		{"[Ee]xception", "Exception", true},
		{"[Ee]xception", "java.lang.IllegalStateException: connection closed", true},
		{"[Ee]xception", "Unhandled exception. System.InvalidOperationException: Sequence contains no elements", true},
		{"[Ee]xception", "uncaught exception: TypeError: x is undefined", true},
		{"[Ee]xception", "worker 3 stopped: java.io.IOException: Broken pipe", true},
		{"Fatal", "Fatal: out of memory", true},
		{"Fatal", "PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted", true},
		{"FATAL", "FATAL: password authentication failed for user \"app\"", true},
		{"FATAL", "2026-11-20 10:00:00 FATAL could not bind port 8080", true},
		// stage 1 and look-alikes
		{"stage 1", `"is_error": false,`, false},
		{"stage 1", `{"error_count": 0, "exception": null}`, false},
		{"prose", "I added exception handling to the parser.", false},
		{"prose", "When an error occurs, log it and retry.", false},
		{"prose", "This is not a fatal problem for the release.", false},
		{"diff", "+ throw new Exception(\"boom\")", false},
		{"heading", "## Fatal errors", false},
	}
	for _, c := range cases {
		_, got := errorLine(c.line)
		if got != c.want {
			t.Errorf("%s: errorLine(%q) = %v, want %v", c.pattern, c.line, got, c.want)
		}
		// The same line in the agent's words of a transcript.
		a := run(t, lines(sInit("s"), sText("m1", "Working.\n"+c.line), sFinal("Still working.", "")))
		if n := len(a["errors"].([]any)); (n > 0) != c.want {
			t.Errorf("%s: %q in a transcript gave errors %v", c.pattern, c.line, a["errors"])
		}
	}
}

// Usage is read wherever the supported schemas put it: the result's usage,
// else its per-model usage, else the assistant messages'; Codex turns; the
// Gemini CLI's stats, flat or per model.
func TestUsageWhereverSchemasPutIt(t *testing.T) {
	msg := func(id string, in, out int) string {
		return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"role":"assistant","content":[{"type":"text","text":"Working."}],"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":1}}}`, id, in, out)
	}
	cases := []struct {
		name          string
		input         string
		in, out, read float64
		cost          float64
	}{
		{"result usage wins over the messages'",
			lines(sInit("s"), msg("m1", 10, 5), sFinal("Done.", "")), 100, 50, 20, 0.5},
		{"result without usage: the messages' usage, the result's cost",
			lines(sInit("s"), msg("m1", 10, 5), msg("m2", 7, 3),
				`{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s","total_cost_usd":0.25}`), 17, 8, 2, 0.25},
		{"result with modelUsage only",
			`{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s","total_cost_usd":0.3,` +
				`"modelUsage":{"claude-a":{"inputTokens":40,"outputTokens":6,"cacheReadInputTokens":3,"cacheCreationInputTokens":2,"costUSD":0.2},` +
				`"claude-b":{"inputTokens":2,"outputTokens":1,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.1}}}`, 42, 7, 3, 0.3},
		{"codex turns",
			lines(`{"type":"thread.started","thread_id":"t"}`,
				`{"type":"turn.completed","usage":{"input_tokens":30,"cached_input_tokens":4,"output_tokens":9}}`,
				`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}`), 31, 10, 4, 0},
		{"gemini stream stats",
			lines(`{"type":"init","session_id":"g","model":"gemini-2.5-pro"}`,
				`{"type":"result","status":"success","stats":{"total_tokens":90,"input_tokens":80,"output_tokens":10,"cached":5}}`), 80, 10, 5, 0},
		{"gemini stream stats per model only",
			lines(`{"type":"init","session_id":"g","model":"gemini-2.5-pro"}`,
				`{"type":"result","status":"success","stats":{"models":{"gemini-2.5-pro":{"total_tokens":90,"input_tokens":80,"output_tokens":10,"cached":5}}}}`), 80, 10, 5, 0},
		{"gemini json stats per model",
			`{"response":"Done.","stats":{"models":{"gemini-2.5-pro":{"tokens":{"prompt":70,"candidates":8,"cached":2}}}}}`, 70, 8, 2, 0},
	}
	for _, c := range cases {
		a := run(t, c.input)
		u := a["usage"].(map[string]any)
		if u["input_tokens"] != c.in || u["output_tokens"] != c.out || u["cache_read_input_tokens"] != c.read || u["cost_usd"] != c.cost {
			t.Errorf("%s: usage %v, want in %v out %v cache read %v cost %v", c.name, u, c.in, c.out, c.read, c.cost)
		}
	}
}

// has_completion_signal describes the agent's prose whatever the status
// block says: an explicit EXIT_SIGNAL: false overrides the decision (the
// loop's), not the observation.
func TestCompletionSignalIsTheProse(t *testing.T) {
	blockWith := func(status, exit string) string {
		return "\n---RALPH_STATUS---\nSTATUS: " + status + "\nEXIT_SIGNAL: " + exit + "\n---END_RALPH_STATUS---"
	}
	cases := []struct {
		name, text string
		want       bool
	}{
		{"done, exit false", "All tasks are complete." + blockWith("COMPLETE", "false"), true},
		{"done, in progress", "All done." + blockWith("IN_PROGRESS", "false"), true},
		{"done after the block", blockWith("IN_PROGRESS", "false") + "\nNothing left to do.", true},
		{"done, header block", "The project is complete.\nRALPH_STATUS:\n  STATUS: IN_PROGRESS\n  EXIT_SIGNAL: false", true},
		{"done, clarity block", "All tasks complete.\n---CLARITY_STATUS---\nNEEDS_CLARIFICATION: false\nEXIT_SIGNAL: false\n---END_CLARITY_STATUS---", true},
		{"not done, exit true", "Working on the parser." + blockWith("COMPLETE", "true"), false},
		{"block words are not prose", "Working on it.\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\nWORK_SUMMARY: all tasks complete\n---END_RALPH_STATUS---", false},
		{"promise is not prose", "Working on it.\n<promise>COMPLETE</promise>", false},
	}
	for _, c := range cases {
		for _, in := range []string{
			sFinal(c.text, ""),
			lines(sInit("s"), sText("m1", c.text)),
			lines(sInit("s"), sText("m1", c.text), sFinal(c.text, "")),
			c.text + "\n",
			lines(`{"type":"thread.started","thread_id":"t"}`, fmt.Sprintf(`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":%q}}`, c.text)),
			fmt.Sprintf(`{"response":%q,"stats":{}}`, c.text),
			lines(`{"type":"init","session_id":"g","model":"m"}`, fmt.Sprintf(`{"type":"message","role":"assistant","content":%q,"delta":true}`, c.text),
				`{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":1}}`),
		} {
			a := run(t, in)
			if got := a["has_completion_signal"]; got != c.want {
				t.Errorf("%s (%.20q…): has_completion_signal %v, want %v", c.name, in, got, c.want)
			}
			if strings.Contains(c.text, "EXIT_SIGNAL: false") && a["exit_signal"] != false {
				t.Errorf("%s: exit_signal %v", c.name, a["exit_signal"])
			}
		}
	}
}

// confidence_score: +50 for a status block (or the flat schema), +20 for an
// explicit EXIT_SIGNAL, +10 per completion indicator, at most 100.
func TestConfidenceScore(t *testing.T) {
	cases := []struct {
		name, input string
		want        float64
	}{
		{"prose only", sFinal("Working on the parser.", ""), 0},
		{"completion wording only", sFinal("All done.", ""), 10},
		{"block, no exit signal", sFinal("Working.\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\n---END_RALPH_STATUS---", ""), 50},
		{"block, exit false", sFinal("Working."+"\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---", ""), 70},
		{"block, complete, passing, done", sFinal("All tasks done."+block, ""), 100},
		{"flat schema", `{"status":"COMPLETE","exit_signal":true,"work_type":"IMPLEMENTATION"}`, 80},
		{"plain text", "nothing structured here\n", 0},
	}
	for _, c := range cases {
		if got := run(t, c.input)["confidence_score"]; got != c.want {
			t.Errorf("%s: confidence_score %v, want %v", c.name, got, c.want)
		}
	}
}
