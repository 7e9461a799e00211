package agents

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agenttest"
	"ralph/internal/agent/fakeagent/script"
)

// Each adapter runs the fake agent executable through the real runner:
// a live call plays a verbatim output of its CLI, then a second call
// resumes the session that output reported.
func TestRunWithFakeAgent(t *testing.T) {
	bin, err := script.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent, sample string
		// session is the id the sample reports; resume the flag that
		// passes it back.
		session, resume string
		// live is a run of the rendered live view.
		live string
	}{
		{"claude", "claude_stream_json_tools.jsonl", "1f619081-1f59-4397-bd4c-8791b3f050a0", "--resume",
			"⚡ Write hello.txt\n⚡ Bash echo hi && cat hello.txt\n"},
		{"codex", "codex_exec_json_tools.jsonl", "01a1fb32-e644-7040-841a-1992e7a63f0a", "resume",
			"Running a command.\n⚡ Shell echo hi > hello_codex.txt && cat hello_codex.txt\nDone.\n"},
		{"gemini", "gemini_stream_json_tools.jsonl", "922c1e13-16a1-45b4-9cb8-bad34e7135f9", "--resume",
			"Creating file.\n⚡ write_file "},
		{"opencode", "opencode_run_json_write_bash_success.jsonl", "ses_e043989d1ffek2IBBDyp5Qa9Om", "--session",
			"I'll create the file.\n⚡ write "},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			t.Parallel()
			sample, _ := filepath.Abs(filepath.Join("..", tt.agent, "testdata", tt.sample))
			path := filepath.Join(t.TempDir(), "script.json")
			s := script.Script{Iterations: []script.Iteration{{StdoutFile: sample, LineDelay: script.Duration(2 * time.Millisecond),
				Files: map[string]string{"made.txt": "by the fake\n"}}}, RepeatLast: true}
			if err := s.Write(path); err != nil {
				t.Fatal(err)
			}
			a, err := New(tt.agent, Options{Cmd: []string{bin}})
			if err != nil {
				t.Fatal(err)
			}
			inv := invocation(t)
			inv.Env, inv.Live = []string{script.EnvScript + "=" + path}, true
			var mu sync.Mutex
			var rendered strings.Builder
			render := agent.RenderLive(&rendered)
			inv.OnEvent = func(e agent.LiveEvent) { mu.Lock(); defer mu.Unlock(); render(e) }

			res, err := a.Run(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || res.Analysis == nil || res.Analysis.SessionID != tt.session || res.Analysis.ToolCalls == 0 {
				t.Fatalf("result %+v, analysis %+v", res, res.Analysis)
			}
			mu.Lock()
			if !strings.Contains(rendered.String(), tt.live) {
				t.Errorf("rendered:\n%s\nwant it to hold:\n%s", rendered.String(), tt.live)
			}
			mu.Unlock()
			if b := string(agenttest.ReadFile(t, filepath.Join(inv.Dir, "made.txt"))); b != "by the fake\n" {
				t.Errorf("made.txt = %q: the call did not run in the project", b)
			}

			inv.Live, inv.OnEvent, inv.SessionID = false, nil, res.Analysis.SessionID
			if res, err = a.Run(context.Background(), inv); err != nil || res.ExitCode != 0 {
				t.Fatalf("second call: %+v, %v", res, err)
			}
			calls, err := script.Calls(path)
			if err != nil || len(calls) != 2 {
				t.Fatalf("calls %+v, %v", calls, err)
			}
			if slices.Contains(calls[0].Args, tt.resume) {
				t.Errorf("first call resumes: %q", calls[0].Args)
			}
			if i := slices.Index(calls[1].Args, tt.resume); i < 0 || i+1 == len(calls[1].Args) || calls[1].Args[i+1] != tt.session {
				t.Errorf("second call does not resume %s: %q", tt.session, calls[1].Args)
			}
			last := calls[1].Args[len(calls[1].Args)-1]
			if !strings.HasPrefix(strings.TrimPrefix(last, "--prompt="), inv.Prompt) {
				t.Errorf("second call's last argument %q is not the prompt", last)
			}
		})
	}
}
