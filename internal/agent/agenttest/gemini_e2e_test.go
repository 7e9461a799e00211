package agenttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/fakeapi"
)

// These tests run the real Gemini CLI (`gemini -p`) against the fake's
// Gemini API: both output formats, its write_file and shell tools, and
// what a used-up quota does.

const geminiTimeout = 60 * time.Second

func geminiArgs(prompt, format string) []string {
	return []string{"-m", GeminiModel, "--approval-mode", "yolo", "-p", prompt, "--output-format", format}
}

// geminiResult is the part of `--output-format json` the tests check.
type geminiResult struct {
	SessionID string `json:"session_id"`
	Response  string `json:"response"`
	Error     *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	} `json:"error"`
	Stats struct {
		Models map[string]struct {
			Tokens struct {
				Prompt     int `json:"prompt"`
				Candidates int `json:"candidates"`
			} `json:"tokens"`
		} `json:"models"`
		Tools struct {
			ByName map[string]struct {
				Success int `json:"success"`
			} `json:"byName"`
		} `json:"tools"`
	} `json:"stats"`
}

// geminiEvent is one line of `--output-format stream-json`.
type geminiEvent struct {
	raw        []byte
	Type       string `json:"type"`
	SessionID  string `json:"session_id"`
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolName   string `json:"tool_name"`
	ToolID     string `json:"tool_id"`
	Status     string `json:"status"`
	Output     string `json:"output"`
	Parameters map[string]any
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		ToolCalls    int `json:"tool_calls"`
	} `json:"stats"`
}

func parseGeminiStream(t *testing.T, stdout []byte) []geminiEvent {
	t.Helper()
	events := jsonLines(t, stdout, func(e *geminiEvent, raw []byte) { e.raw = raw })
	if len(events) < 2 || events[0].Type != "init" || events[0].SessionID == "" || events[len(events)-1].Type != "result" {
		t.Fatalf("stream is not init … result:\n%s", stdout)
	}
	return events
}

// lastJSONObject decodes the JSON object that ends out: Gemini CLI prints
// its error report after log lines and a stack trace.
func lastJSONObject(t *testing.T, out []byte, v any) {
	t.Helper()
	i := bytes.LastIndex(out, []byte("\n{\n"))
	if i < 0 {
		t.Fatalf("no JSON object at the end of:\n%s", out)
	}
	if err := json.Unmarshal(out[i+1:], v); err != nil {
		t.Fatalf("%v\n%s", err, out[i+1:])
	}
}

func TestGeminiWriteFileJSON(t *testing.T) {
	bin := GeminiBinary(t)
	t.Parallel()
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("I'll create the file.", "write_file",
			map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": fileContent}),
		fakeapi.TextTurn(statusText),
	}}}})

	res := Run(t, dir, GeminiEnv(t, fake.URL), geminiTimeout, bin, geminiArgs("create hello.txt", "json")...)
	succeeded(t, res)
	var r geminiResult
	dec := json.NewDecoder(bytes.NewReader(res.Stdout))
	if err := dec.Decode(&r); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON object (%v):\n%s", err, res.Stdout)
	}
	// The response is the final answer only, not the text before the tool call.
	if r.SessionID == "" || r.Error != nil || r.Response != statusText || r.Stats.Tools.ByName["write_file"].Success != 1 {
		t.Errorf("result = %s", res.Stdout)
	}
	if tok := r.Stats.Models[GeminiModel].Tokens; tok.Prompt == 0 || tok.Candidates == 0 {
		t.Errorf("usage not reported: %+v", r.Stats.Models)
	}
	wroteHello(t, dir)

	reqs := fake.RequestsTo("/v1beta/models/")
	if len(reqs) != 2 {
		t.Fatalf("fake saw %d requests, want 2", len(reqs))
	}
	for i, rq := range reqs {
		if rq.Path != "/v1beta/models/"+GeminiModel+":streamGenerateContent" || rq.Query != "alt=sse" || rq.Turn != i {
			t.Errorf("request %d: %s?%s answered as turn %d", i, rq.Path, rq.Query, rq.Turn)
		}
		if k := rq.Header.Get("X-Goog-Api-Key"); k != "dummy" {
			t.Errorf("request %d: api key header %q", i, k)
		}
	}
	if tools := reqs[0].Messages.ToolNames(); !slices.Contains(tools, "write_file") || !slices.Contains(tools, "run_shell_command") {
		t.Errorf("offered tools %v", tools)
	}
	if p := reqs[0].Messages.Prompts(); len(p) != 1 || !strings.HasSuffix(p[0], "\ncreate hello.txt") {
		t.Errorf("prompts = %q", p)
	}
	noProblems(t, fake)
	saveTestdata(t, "gemini_json_write_file_success.json", res.Stdout, dir, fake.URL)
}

func TestGeminiStreamJSONWriteFileAndShell(t *testing.T) {
	bin := GeminiBinary(t)
	t.Parallel()
	dir := t.TempDir()
	fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
		fakeapi.ToolTurn("I'll create the file.", "write_file",
			map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": fileContent}),
		fakeapi.ToolTurn("", "run_shell_command", map[string]string{"command": "cat hello.txt", "description": "Show the file"}),
		fakeapi.TextTurn(statusText),
	}}}})

	res := Run(t, dir, GeminiEnv(t, fake.URL), geminiTimeout, bin, geminiArgs("create hello.txt", "stream-json")...)
	succeeded(t, res)
	events := parseGeminiStream(t, res.Stdout)
	var kinds []string
	var answer strings.Builder
	for _, e := range events {
		k := e.Type
		switch e.Type {
		case "message":
			k += ":" + e.Role
			if e.Role == "assistant" {
				answer.WriteString(e.Content)
			}
		case "tool_use":
			k += ":" + e.ToolName
		case "tool_result":
			k += ":" + e.Status
		}
		// Streamed text arrives as several message events; one is enough.
		if len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
	}
	want := []string{"init", "message:user", "message:assistant", "tool_use:write_file", "tool_result:success",
		"tool_use:run_shell_command", "tool_result:success", "message:assistant", "result"}
	if !slices.Equal(kinds, want) {
		t.Errorf("events\n got %v\nwant %v", kinds, want)
	}
	if got := answer.String(); got != "I'll create the file."+statusText {
		t.Errorf("assistant text = %q", got)
	}
	for _, e := range events {
		if e.Type == "tool_result" && e.Output != "" && !strings.Contains(e.Output, strings.TrimSpace(fileContent)) {
			t.Errorf("shell output = %q", e.Output)
		}
	}
	last := events[len(events)-1]
	if last.Status != "success" || last.Stats == nil || last.Stats.ToolCalls != 2 || last.Stats.InputTokens == 0 {
		t.Errorf("result = %s", last.raw)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err != nil {
		t.Error(err)
	}
	if n := len(fake.MessageRequests()); n != 3 {
		t.Errorf("fake saw %d model calls, want 3", n)
	}
	noProblems(t, fake)
	saveTestdata(t, "gemini_stream_json_write_file_shell_success.jsonl", res.Stdout, dir, fake.URL)
}

// TestGeminiQuotaExhausted records what a 429 RESOURCE_EXHAUSTED whose
// retry delay is over five minutes does: Gemini CLI gives up at once with
// exit code 173. With json output stdout is empty and the error object ends
// stderr; with stream-json a result event with status error ends stdout.
// The reset time is only in the message, as "Please retry in <N>s."
func TestGeminiQuotaExhausted(t *testing.T) {
	bin := GeminiBinary(t)
	t.Parallel()
	const wantRetry = "Please retry in 10800s."
	for _, format := range []string{"json", "stream-json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{
				{Error: &fakeapi.ErrorReply{Status: 429, UsageLimit: &fakeapi.UsageLimit{
					Claim: "GenerateRequestsPerHourPerProjectPerModel", ResetsIn: fakeapi.Duration(3 * time.Hour)}}},
			}}}})
			res := Run(t, dir, GeminiEnv(t, fake.URL), geminiTimeout, bin, geminiArgs("work", format)...)
			if res.ExitCode != 173 {
				t.Errorf("exit %d, want 173\nstderr:\n%s", res.ExitCode, res.Stderr)
			}
			var msg string
			if format == "json" {
				if len(res.Stdout) != 0 {
					t.Errorf("stdout = %q, want nothing", res.Stdout)
				}
				var r geminiResult
				lastJSONObject(t, res.Stderr, &r)
				if r.SessionID == "" || r.Error == nil || r.Error.Code != 429 {
					t.Fatalf("error report = %+v", r)
				}
				msg = r.Error.Message
				saveTestdata(t, "gemini_json_429_quota.stderr", res.Stderr, dir, fake.URL)
			} else {
				events := parseGeminiStream(t, res.Stdout)
				last := events[len(events)-1]
				if last.Status != "error" || last.Error == nil {
					t.Fatalf("result = %s", last.raw)
				}
				msg = last.Error.Message
				saveTestdata(t, "gemini_stream_json_429_quota.jsonl", res.Stdout, dir, fake.URL)
			}
			if !strings.Contains(msg, "You exceeded your current quota") || !strings.Contains(msg, wantRetry) {
				t.Errorf("error message %q does not carry %q", msg, wantRetry)
			}
			if n := len(fake.MessageRequests()); n != 1 {
				t.Errorf("fake saw %d model calls, want 1 (no retries)", n)
			}
			noProblems(t, fake)
		})
	}
}
