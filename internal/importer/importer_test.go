package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/analyze"
)

// fakeAgent writes files (relative to the invocation's Dir) and reports a
// result, recording the invocation.
type fakeAgent struct {
	files  map[string]string
	result agent.Result
	err    error
	got    agent.Invocation
}

func (f *fakeAgent) Name() string                               { return "fake" }
func (f *fakeAgent) Capabilities() agent.Capabilities           { return agent.Capabilities{} }
func (f *fakeAgent) Command(agent.Invocation) ([]string, error) { return []string{"fake"}, nil }
func (f *fakeAgent) Run(_ context.Context, inv agent.Invocation) (agent.Result, error) {
	f.got = inv
	for name, content := range f.files {
		p := filepath.Join(inv.Dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return agent.Result{}, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return agent.Result{}, err
		}
	}
	res := f.result
	res.StdoutPath, res.StderrPath = inv.StdoutPath, inv.StderrPath
	return res, f.err
}

const goodPlan = "# Fix Plan\n\n## High Priority\n- [ ] Set up the module\n- [ ] Add the store\n\n## Optional\n- [ ] Colours\n\n## Completed\n"

func allThree() map[string]string {
	return map[string]string{
		".ralph/PROMPT.md":             "# Work\nOne task per iteration.\n",
		".ralph/fix_plan.md":           goodPlan,
		".ralph/specs/requirements.md": "# Requirements\n",
	}
}

func prepare(t *testing.T, dir string) (Prepared, Files) {
	t.Helper()
	files := ProjectFiles(dir, ".ralph")
	doc, err := ParseDocument("prd.md", []byte(completePRD))
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 4, 1, 8, 30, 0, 0, time.UTC) }
	return Prepare(doc, Options{Dir: dir, Files: files, LogDir: filepath.Join(dir, ".ralph", "logs"), Timeout: 7 * time.Minute, Model: "m1", Now: now}), files
}

func TestRunWritesAllThree(t *testing.T) {
	dir := t.TempDir()
	p, files := prepare(t, dir)
	fa := &fakeAgent{files: allThree()}
	out, err := Run(context.Background(), fa, p, files)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Check.OK() || len(out.Check.Written) != 3 || out.Check.Tasks.Total != 3 || out.Check.Tasks.OpenOptional != 1 {
		t.Errorf("check %+v", out.Check)
	}
	inv := fa.got
	if inv.Dir != dir || inv.OutputFormat != "json" || inv.Timeout != 7*time.Minute || inv.Model != "m1" ||
		!slices.Equal(inv.AllowedTools, []string{"Write", "Read", "Edit"}) ||
		inv.StdoutPath != filepath.Join(dir, ".ralph", "logs", "import_20260401-083000.stdout.log") ||
		!strings.Contains(inv.Prompt, "Write exactly these three files") {
		t.Errorf("invocation %+v", inv)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "logs")); err != nil {
		t.Errorf("log directory not created: %v", err)
	}
}

func TestRunReportsWhatIsMissing(t *testing.T) {
	tests := []struct {
		name     string
		existing map[string]string // before the run
		writes   map[string]string
		result   agent.Result
		want     []string
		wantNote string
	}{
		{
			name:   "two of three",
			writes: map[string]string{".ralph/PROMPT.md": "x", ".ralph/fix_plan.md": goodPlan},
			want:   []string{".ralph/specs/requirements.md was not written"},
		},
		{
			// Nothing on stderr: the stdout log is the one that explains.
			name:     "nothing, agent failed",
			result:   agent.Result{ExitCode: 1},
			want:     []string{".ralph/PROMPT.md was not written", ".ralph/fix_plan.md was not written", ".ralph/specs/requirements.md was not written"},
			wantNote: "the agent exited with status 1; see .ralph/logs/import_20260401-083000.stdout.log",
		},
		{
			name: "not logged in: the reason, not a log to open",
			result: agent.Result{ExitCode: 1, Analysis: &analyze.Analysis{IsError: true,
				SetupFailure: analyze.SetupFailure{Detected: true, Kind: analyze.SetupAuth, Message: "Not logged in · Please run /login"}}},
			want:     []string{".ralph/PROMPT.md was not written", ".ralph/fix_plan.md was not written", ".ralph/specs/requirements.md was not written"},
			wantNote: "the agent cannot work as set up: Not logged in · Please run /login",
		},
		{
			name:   "a plan without checkboxes",
			writes: map[string]string{".ralph/PROMPT.md": "x", ".ralph/fix_plan.md": "# Plan\n\nDo everything.\n", ".ralph/specs/requirements.md": "r"},
			want:   []string{`.ralph/fix_plan.md has no checkbox tasks ("- [ ] task")`},
		},
		{
			name:   "an empty file",
			writes: map[string]string{".ralph/PROMPT.md": " \n", ".ralph/fix_plan.md": goodPlan, ".ralph/specs/requirements.md": "r"},
			want:   []string{".ralph/PROMPT.md is empty"},
		},
		{
			name:     "an old file left as it was",
			existing: map[string]string{".ralph/specs/requirements.md": "old"},
			writes:   map[string]string{".ralph/PROMPT.md": "x", ".ralph/fix_plan.md": goodPlan},
			result:   agent.Result{TimedOut: true, Duration: 90 * time.Second, ExitCode: 143},
			want:     []string{".ralph/specs/requirements.md was not rewritten (unchanged since before the import)"},
			wantNote: "the agent timed out after 1m30s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.existing {
				_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, files := prepare(t, dir)
			_, err := Run(context.Background(), &fakeAgent{files: tt.writes, result: tt.result}, p, files)
			var ie *IncompleteError
			if !errors.As(err, &ie) {
				t.Fatalf("err %v, want an IncompleteError", err)
			}
			if !slices.Equal(ie.Problems, tt.want) || !strings.HasPrefix(ie.Agent, tt.wantNote) || (tt.wantNote == "") != (ie.Agent == "") {
				t.Errorf("problems %q note %q, want %q %q", ie.Problems, ie.Agent, tt.want, tt.wantNote)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestRunStartFailure(t *testing.T) {
	dir := t.TempDir()
	p, files := prepare(t, dir)
	startErr := &agent.StartError{Command: "claude", Err: os.ErrNotExist}
	_, err := Run(context.Background(), &fakeAgent{err: startErr, result: agent.Result{ExitCode: -1, StartErr: startErr}}, p, files)
	var se *agent.StartError
	var ie *IncompleteError
	if !errors.As(err, &se) || errors.As(err, &ie) {
		t.Errorf("err %v, want the start error", err)
	}
}

func TestExisting(t *testing.T) {
	dir := t.TempDir()
	files := ProjectFiles(dir, ".ralph")
	if got := files.Existing(); len(got) != 0 {
		t.Errorf("empty dir: %v", got)
	}
	_ = os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	_ = os.WriteFile(files.FixPlan, []byte("x"), 0o644)
	if got := files.Existing(); !slices.Equal(got, []string{files.FixPlan}) {
		t.Errorf("got %v", got)
	}
	if abs := ProjectFiles(dir, "/elsewhere/state"); abs.Prompt != "/elsewhere/state/PROMPT.md" {
		t.Errorf("absolute ralph dir: %+v", abs)
	}
}
