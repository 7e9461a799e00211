package transcript

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/activity"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sampleDir is the directory the samples were captured in: their file
// targets show relative to it. The captures of internal/agent/agenttest ran in
// captureDir.
const (
	sampleDir  = "/tmp/agentcli/proj"
	captureDir = "/tmp/ralph-e2e/001"
)

func text(evs []activity.Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.String())
	}
	return b.String()
}

// The verbatim outputs of the real CLIs (testdata/*.json, *.jsonl) render
// as their .golden files say; run with -update after a deliberate change.
func TestGolden(t *testing.T) {
	samples, err := filepath.Glob("testdata/*.json*")
	if err != nil || len(samples) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, s := range samples {
		t.Run(filepath.Base(s), func(t *testing.T) {
			in, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			dir := sampleDir
			if bytes.Contains(in, []byte(captureDir)) {
				dir = captureDir
			}
			got := "format: " + string(Detect(in)) + "\n" + text(Render(in, Options{Dir: dir}))
			golden := strings.TrimSuffix(s, filepath.Ext(s)) + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// A log that is followed arrives in arbitrary pieces; it renders the same.
func TestPiecewiseEqualsWhole(t *testing.T) {
	samples, _ := filepath.Glob("testdata/*.json*")
	for _, s := range samples {
		in, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		var evs []activity.Event
		r := NewRenderer(Options{}, func(e activity.Event) { evs = append(evs, e) })
		for chunk := range slicesOf(in, 7) {
			if _, err := r.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		r.Flush()
		if got, want := text(evs), text(Render(in, Options{})); got != want {
			t.Errorf("%s: piecewise\n%s\nwhole\n%s", s, got, want)
		}
	}
}

func slicesOf(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name, in string
		opt      Options
		want     string
	}{
		{"plain text, indentation kept, JSON-looking lines too", "Working.\n  step 1\n{\"a\":1}\n\nDone.", Options{},
			"Working.\n  step 1\n{\"a\":1}\nDone.\n"},
		{"empty", "", Options{}, ""},
		{"claude tool results: blocks, errors, more lines",
			`{"type":"system","subtype":"init","cwd":"/p"}` + "\n" +
				`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/p/a/b.go"}}]}}` + "\n" +
				`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"l1\nl2\nl3"}]}]}}` + "\n" +
				`{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":"boom\nat x"}]}}` + "\n" +
				`{"type":"user","message":{"content":"a prompt"}}` + "\n",
			Options{ResultLines: 2},
			"⚡ Read a/b.go\n  ↳ l1\n    l2 (1 more line)\n  ↳ ✖ error: boom\n    at x\n"},
		{"codex: a call shown once, failures with their exit code",
			`{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"bash -lc 'go test ./...'"}}` + "\n" +
				`{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc 'go test ./...'","aggregated_output":"FAIL x\nFAIL\n","exit_code":1}}` + "\n" +
				`{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"/p/new.go","kind":"add"},{"path":"old.go","kind":"update"}]}}` + "\n" +
				`{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":3,"output_tokens":2}}`,
			Options{Dir: "/p"},
			"⚡ Shell go test ./...\n  ↳ ✖ exit 1: FAIL x (1 more line)\n⚡ Write new.go\n⚡ Edit old.go\n── turn completed · 5 in / 2 out tokens (3 cached)\n"},
		{"gemini: deltas joined, failed tool, error event",
			`{"type":"init","session_id":"s"}` + "\n" +
				`{"type":"message","role":"assistant","content":"Read","delta":true}` + "\n" +
				`{"type":"message","role":"assistant","content":"ing.","delta":true}` + "\n" +
				`{"type":"tool_use","tool_name":"read_file","parameters":{"file_path":"x.go"}}` + "\n" +
				`{"type":"tool_result","status":"error","error":{"type":"io","message":"no such file"}}` + "\n" +
				`{"type":"error","severity":"error","message":"quota exceeded"}` + "\n" +
				`{"type":"message","role":"assistant","content":"Stopped.","delta":true}`,
			Options{},
			"Reading.\n⚡ read_file x.go\n  ↳ ✖ error: no such file\n✖ quota exceeded\nStopped.\n"},
		{"gemini: a whole message stands alone, not joined to the deltas before it",
			`{"type":"message","role":"assistant","content":"Work","delta":true}` + "\n" +
				`{"type":"message","role":"assistant","content":"ing."}` + "\n" +
				`{"type":"message","role":"assistant","content":"Done."}` + "\n" +
				`{"type":"message","role":"user","content":"a prompt"}`,
			Options{},
			"Work\ning.\nDone.\n"},
		{"opencode: failed command, failed tool, refused tool, provider error",
			`{"type":"tool_use","sessionID":"s","part":{"tool":"bash","state":{"status":"completed","input":{"command":"go test ./..."},"output":"--- FAIL: TestX\nFAIL\n","metadata":{"exit":1}}}}` + "\n" +
				`{"type":"tool_use","sessionID":"s","part":{"tool":"read","state":{"status":"error","input":{"filePath":"/p/missing.go"},"error":"Error: File not found: /p/missing.go"}}}` + "\n" +
				`{"type":"tool_use","sessionID":"s","part":{"tool":"edit","state":{"status":"error","input":{"filePath":"/etc/hosts"},"error":"The user rejected permission to use this specific tool call."}}}` + "\n" +
				`{"type":"reasoning","sessionID":"s","part":{"type":"reasoning","text":"hmm"}}` + "\n" +
				`{"type":"step_finish","sessionID":"s","part":{"reason":"stop","tokens":{"input":10,"output":2,"reasoning":3,"cache":{"read":4,"write":5}},"cost":0.0091}}` + "\n" +
				`{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":"Rate limit reached","statusCode":429}}}`,
			Options{Dir: "/p"},
			"⚡ bash go test ./...\n  ↳ ✖ exit 1: --- FAIL: TestX (1 more line)\n⚡ read missing.go\n  ↳ ✖ error: Error: File not found: /p/missing.go\n" +
				"✖ permission denied: edit /etc/hosts\n── step: stop · 10 in / 5 out tokens (4 cache read, 5 cache write) · $0.0091\n✖ Rate limit reached\n"},
		{"gemini json error document", `{"error":{"type":"ApiError","message":"429 Too Many Requests","code":429}}`, Options{},
			"✖ 429 Too Many Requests\n── result: error\n"},
		{"a cut-off line in a stream", `{"type":"system","subtype":"init"}` + "\n" + `{"type":"assistant","mess`, Options{},
			"[a cut-off JSON line of 25 bytes]\n"},
		{"a document that never closes is text", "{\n  \"a\": 1,\n", Options{}, "{\n  \"a\": 1,\n"},
		{"an error first, then codex", `{"type":"error","message":"bad key"}` + "\n" + `{"type":"turn.failed","error":{"message":"bad key"}}`, Options{},
			"✖ bad key\n── turn failed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := text(Render([]byte(tt.in), tt.opt)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	tests := map[string]Format{
		"":                                   FormatUnknown,
		"hello\n":                            FormatText,
		`{"type":"result","is_error":false}`: FormatClaudeJSON,
		`{"type":"system","subtype":"init"}`: FormatClaudeStream,
		`{"type":"result","status":"success","stats":{}}`:                  FormatGeminiStream,
		`{"type":"thread.started"}`:                                        FormatCodexJSON,
		"{\n \"response\": \"hi\"\n}\n":                                    FormatGeminiJSON,
		`{"type":"error","message":"x"}` + "\n" + `{"type":"turn.failed"}`: FormatCodexJSON,
		`{"type":"tool_use","tool_name":"write_file"}`:                     FormatGeminiStream,
		`{"type":"step_start","timestamp":1,"sessionID":"ses_a"}`:          FormatOpenCode,
		`{"type":"error","timestamp":1,"sessionID":"ses_a","error":{}}`:    FormatOpenCode,
	}
	for in, want := range tests {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("Detect(%q) = %q, want %q", in, got, want)
		}
	}
}

// An over-long line is cut, not held whole, and rendering goes on after it.
func TestLongLine(t *testing.T) {
	in := append(bytes.Repeat([]byte("x"), maxLine+10), "\nafter\n"...)
	got := text(Render(in, Options{}))
	if !strings.HasSuffix(got, "\nafter\n") || len(got) > maxLine+20 {
		t.Errorf("got %d bytes ending %q", len(got), got[max(0, len(got)-20):])
	}
}
