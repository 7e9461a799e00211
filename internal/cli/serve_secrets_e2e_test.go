package cli

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// Secrets the agent knows — a service token of the daemon's environment,
// an API key of its session's .ralphrc, neither with a shape — and prints
// in its output, on stderr, in its status block and in its question are
// masked by value everywhere the daemon keeps or serves text: the API's
// task (questions, history[].status_block), the event stream, the
// dashboard's pages, `ralph task`, and every file under RALPH_HOME — the
// SQLite database and its write-ahead log read as raw bytes, the task
// file, the iteration logs, the prompt — and the daemon's log. A person's
// answer holding one is masked in the task file too.
func TestServeMasksTheAgentsSecrets(t *testing.T) {
	const envSecret, rcSecret = "svcplain4242zz", "rcplain7788yy"
	secrets := regexp.MustCompile(envSecret + "|" + rcSecret)
	r := servetest.New(t, servetest.Options{Token: "serve-secrets-test-token-0123456789"})
	r.Env = append(r.Env, "ACME_SERVICE_TOKEN="+envSecret)
	both := envSecret + " and " + rcSecret
	s := script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{
			servetest.AssistantText("Deploying with " + both + "."),
			servetest.ResultLine("sess-s", "Deployed with "+both+"."+
				"\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\nFILES_MODIFIED: 1\nRECOMMENDATION: rotate "+both+"\n---END_RALPH_STATUS---"),
		}, Stderr: "curl: used " + both + "\n", Files: map[string]string{"deploy.txt": "{{call}}\n"}},
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-s", "Which one?"+servetest.Question("Keep "+both+"?"))}},
	}}
	rc := fmt.Sprintf("CLAUDE_CODE_CMD=\"env %s=%s %s\"\nMAX_CALLS_PER_HOUR=10000\nDEPLOY_API_KEY=%s\n",
		script.EnvScript, filepath.Join(r.Work, "agent-s.json"), r.Fake, rcSecret)
	dir, _, err := servetest.AgentRepo(r.Ralph, r.Fake, r.Env, r.Work, "s", s, map[string]string{".ralphrc": rc})
	if err != nil {
		t.Fatal(err)
	}
	r.Sessions = append(r.Sessions, "s="+dir)
	r.Start(1)
	evs := r.Events(r.Token)

	r.OK("start", "s", "Deploy it")
	r.OK("loop", "s", "5")
	v := r.WaitFor("s", "a question", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	// The words around the secrets arrive: what is checked below is the
	// agent's text, masked, not missing text.
	if !strings.Contains(v.Questions[0], "Keep [redacted] and [redacted]?") {
		t.Errorf("question: %q", v.Questions)
	}
	if len(v.History) < 1 || v.History[0].StatusBlock["RECOMMENDATION"] != "rotate [redacted] and [redacted]" {
		t.Errorf("history: %+v", v.History)
	}
	if !evs.WaitFor("Deploying with [redacted] and [redacted].", 10*time.Second) {
		t.Error("the event stream never showed the agent's live text")
	}
	r.OK("answer", "s", "Keep "+envSecret+", drop the other")
	r.WaitFor("s", "the question again", func(v serve.TaskView) bool { return len(v.Questions) > 0 && v.LoopCount >= 3 })

	served := map[string]string{}
	for _, path := range []string{"/api/tasks", "/api/tasks/s", "/", "/task/s", "/stats"} {
		code, body := r.API("GET", path, r.Token, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		served["GET "+path] = body
	}
	served["ralph task status"] = r.OK("status", "s")
	served["ralph task status --json"] = r.OK("status", "s", "--json")
	served["event stream"] = strings.Join(evs.Lines(), "\n")
	if !strings.Contains(served["GET /task/s"], "[redacted]") {
		t.Errorf("the task page shows no masked text:\n%s", served["GET /task/s"])
	}
	for what, text := range served {
		if secrets.MatchString(text) {
			t.Errorf("%s holds a secret:\n%s", what, text)
		}
	}

	// The files, while the daemon runs (the WAL not yet checkpointed) and
	// after it stopped.
	checkHome := func(when string) {
		t.Helper()
		var logs int
		err := filepath.WalkDir(r.Home, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if loc := secrets.FindIndex(b); loc != nil {
				t.Errorf("%s: %s holds a secret: …%q…", when, path, b[max(0, loc[0]-80):min(len(b), loc[1]+40)])
			}
			if strings.HasPrefix(e.Name(), "iteration_") {
				logs++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if logs < 4 {
			t.Errorf("%s: %d iteration logs under RALPH_HOME, want the stdout and stderr logs of 3 calls at least", when, logs)
		}
	}
	checkHome("running")
	task := readFile(t, filepath.Join(r.Home, "handoffs", "s-task.md"))
	for _, want := range []string{"CLARIFICATION_QUESTIONS: Keep [redacted] and [redacted]?", "A: Keep [redacted], drop the other"} {
		if !strings.Contains(task, want) {
			t.Errorf("task file lacks %q:\n%s", want, task)
		}
	}
	if err := r.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	checkHome("stopped")
	if secrets.MatchString(r.Log.String()) {
		t.Errorf("the daemon's log holds a secret:\n%s", r.Log.String())
	}
}
