package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ralph/internal/loop"
	"ralph/internal/taskfile"
)

func TestParseSession(t *testing.T) {
	for in, want := range map[string]string{
		"5=/src/five": "", "api.v2=/x": "", "a_b-c=/x": "",
		"=/x": "a name is", "../up=/x": "a name is", "a/b=/x": "a name is", ".hidden=/x": "a name is",
		"nodir": "want NAME=DIR", "a=": "want NAME=DIR",
	} {
		s, err := ParseSession(in)
		switch {
		case want == "" && (err != nil || !filepath.IsAbs(s.Dir)):
			t.Errorf("%q: %v %+v", in, err, s)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:7777": true, "[::1]:7777": true, "localhost:1": true,
		"0.0.0.0:7777": false, ":7777": false, "10.0.0.2:80": false, "nonsense": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
}

func TestToken(t *testing.T) {
	t.Setenv(EnvToken, "")
	home := Home(t.TempDir())
	if _, err := Token(home, false); err == nil || !strings.Contains(err.Error(), EnvToken) {
		t.Errorf("no token yet: %v", err)
	}
	tok, err := Token(home, true)
	if err != nil || len(tok) != 64 {
		t.Fatalf("created %q %v", tok, err)
	}
	if fi, _ := os.Stat(home.TokenFile()); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if again, _ := Token(home, false); again != tok {
		t.Error("the client reads another token")
	}
	t.Setenv(EnvToken, "from-env")
	if got, _ := Token(home, true); got != "from-env" {
		t.Errorf("env token: %q", got)
	}
}

// The token guards every path; the reply never echoes it.
func TestAuth(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })
	h := auth("s3cret", ok)
	for header, want := range map[string]int{"": 401, "Bearer wrong": 401, "s3cret": 401, "Bearer s3cret ": 401, "Bearer s3cret": 204} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/tasks", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != want || strings.Contains(rec.Body.String(), "s3cret") {
			t.Errorf("%q: %d %s", header, rec.Code, rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	auth("", ok).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 401 {
		t.Errorf("an empty token lets requests through: %d", rec.Code)
	}
}

// After an iteration the task file's status and RALPH_STATUS follow the
// record; the checklist stays the agent's; answers survive.
func TestTaskFileAfterIteration(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "5-task.md")
	data := taskfile.New("Add auth", "5", t0)
	data = []byte(strings.Replace(string(data), "## RALPH_STATUS", "- [x] model\n- [ ] logout\n\n## RALPH_STATUS", 1))
	data = appendAnswer(data, []string{"Which DB?"}, "SQLite", t0)
	os.WriteFile(path, data, 0o644)
	rec := loop.Metrics{Status: "IN_PROGRESS", StatusBlock: map[string]string{"TASKS_REMAINING": "1", "STATUS": "IN_PROGRESS", "EXIT_SIGNAL": "false", "ZETA": "z"}}
	if err := rewriteTaskFile(path, rec.StatusBlock["STATUS"], blockFields(rec.StatusBlock)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	f, err := taskfile.Parse(path, got)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, fl := range f.Block {
		keys = append(keys, fl.Key)
	}
	if f.Status != "IN_PROGRESS" || strings.Join(keys, ",") != "STATUS,EXIT_SIGNAL,TASKS_REMAINING,ZETA" {
		t.Errorf("status %q, block %v", f.Status, keys)
	}
	if c := f.Checklist.Counts(); c.Total != 2 || c.OpenRequired != 1 {
		t.Errorf("checklist %+v", c)
	}
	if !strings.Contains(string(got), "## Answers") || !strings.Contains(string(got), "Q: Which DB?\nA: SQLite") {
		t.Errorf("answers lost:\n%s", got)
	}
	// A status change without a record keeps the block.
	if err := rewriteTaskFile(path, "DONE", nil); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if f, _ := taskfile.Parse(path, got); f.Status != "DONE" || len(f.Block) != 4 {
		t.Errorf("after the state change: %q %v", f.Status, f.Block)
	}
}

func TestPromptNamesTheTaskFile(t *testing.T) {
	p := prompt("Add auth", "/home/h/handoffs/5-task.md", "", "")
	for _, want := range []string{"# Task: Add auth", "/home/h/handoffs/5-task.md", "## Checklist", "## Answers", "RALPH_STATUS", "CLARITY_STATUS"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "The project's own instructions") || strings.Contains(p, "## Answers to your questions") {
		t.Errorf("sections for nothing:\n%s", p)
	}
}

// The project's PROMPT.md and the person's answers come along in the
// prompt; the answers are the task file's, the last of them when long.
func TestPromptCarriesTheProjectsWaysAndTheAnswers(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "PROMPT.md"), []byte("Run make check before every commit.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := []byte("# Task: x\n\n## Checklist\n\n## Answers\n\n### 2026-11-27 10:00\n\nQ: Which DB?\nA: SQLite.\n")
	p := prompt("Add auth", "/h/5-task.md", projectPrompt(dir), answersOf(task))
	for _, want := range []string{"## Answers to your questions", "Q: Which DB?\nA: SQLite.", "## The project's own instructions",
		"Run make check before every commit.", "not fix_plan.md"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	// A linked PROMPT.md is not read: a repository cannot pull a file of
	// the host into the prompt.
	secret := filepath.Join(t.TempDir(), "key")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	os.Remove(filepath.Join(dir, ".ralph", "PROMPT.md"))
	if err := os.Symlink(secret, filepath.Join(dir, ".ralph", "PROMPT.md")); err != nil {
		t.Fatal(err)
	}
	if got := projectPrompt(dir); got != "" {
		t.Errorf("a linked PROMPT.md was read: %q", got)
	}
	if long := answersOf([]byte("\n## Answers\n" + strings.Repeat("a", maxPromptAnswers+100))); len(long) > maxPromptAnswers+4 {
		t.Errorf("answers of %d bytes in the prompt", len(long))
	}
}

// A task file that is not one any more is kept aside and named with its
// line; a missing one is written afresh.
func TestCheckTaskFile(t *testing.T) {
	dir := t.TempDir()
	tk := Task{ID: "t1", Session: "5", Title: "Add auth", File: filepath.Join(dir, "5-task.md"), CreatedAt: t0}
	if err := checkTaskFile(tk, t0); err != nil {
		t.Fatal(err)
	}
	if f, err := taskfile.Parse(tk.File, mustRead(t, tk.File)); err != nil || f.Title != "Add auth" {
		t.Fatalf("fresh file: %v %+v", err, f)
	}
	bad := "# Task: Add auth\n\n**Created:** yesterday\n\n- [x] model\n"
	os.WriteFile(tk.File, []byte(bad), 0o644)
	err := checkTaskFile(tk, t0)
	if err == nil || !strings.Contains(err.Error(), "5-task.md:3:") || !strings.Contains(err.Error(), "kept aside as 5-task.md.corrupt-") {
		t.Fatalf("corrupt file: %v", err)
	}
	aside, _ := filepath.Glob(tk.File + ".corrupt-*")
	if len(aside) != 1 || string(mustRead(t, aside[0])) != bad {
		t.Errorf("kept aside: %v", aside)
	}
	if err := checkTaskFile(tk, t0); err != nil {
		t.Errorf("the fresh file: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
