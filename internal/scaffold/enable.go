package scaffold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// The files that make a directory a ralph project, relative to it. `ralph
// run` needs the first three.
const (
	PromptPath  = ".ralph/PROMPT.md"
	PlanPath    = ".ralph/fix_plan.md"
	AgentPath   = ".ralph/AGENT.md"
	SpecsKeep   = ".ralph/specs/.gitkeep"
	RalphrcPath = ".ralphrc"
)

// RequiredFiles are the files `ralph run` refuses to start without.
var RequiredFiles = []string{PromptPath, PlanPath, AgentPath}

// EnableOptions describe one `ralph enable`.
type EnableOptions struct {
	Dir         string       // the project directory; it must exist
	ProjectName string       // "" means the directory's name
	Force       bool         // replace ralph's files that exist (never anything else)
	Sources     []TaskSource // tasks for the new fix_plan.md, in order
	NoStack     bool         // leave AGENT.md's commands for the user to fill in
	Env         Env
}

// EnableResult is the report, also printed by `ralph enable --json`.
type EnableResult struct {
	// Enabled: this run made the directory a ralph project (or, with Force,
	// rewrote ralph's files). False when it already was one and was left so.
	Enabled        bool     `json:"enabled"`
	AlreadyEnabled bool     `json:"already_enabled"` // PROMPT.md, fix_plan.md and AGENT.md existed before
	ProjectDir     string   `json:"project_dir"`
	ProjectName    string   `json:"project_name"`
	Stack          []Stack  `json:"stack"`
	FilesCreated   []string `json:"files_created"`
	FilesUpdated   []string `json:"files_updated"` // replaced with Force, or .gitignore appended to
	FilesSkipped   []string `json:"files_skipped"` // existed and were left alone
	TasksImported  int      `json:"tasks_imported"`
	Warnings       []string `json:"warnings"`
	Error          string   `json:"error,omitempty"`
}

// NewEnableResult is the empty report, with lists that print as [] in JSON.
func NewEnableResult(dir string) *EnableResult {
	return &EnableResult{ProjectDir: dir, Stack: []Stack{}, FilesCreated: []string{}, FilesUpdated: []string{},
		FilesSkipped: []string{}, Warnings: []string{}}
}

// Enable makes an existing directory a ralph project: the templates, AGENT.md
// filled from the detected stacks, a plan from the task sources, .ralphrc
// and the .gitignore entries. Existing files are left alone unless Force, and
// then only ralph's own; nothing is committed. Inputs are all read and
// checked before anything is written, so a failure changes nothing.
func Enable(ctx context.Context, o EnableOptions) (*EnableResult, error) {
	dir, err := projectDir(o.Dir, true)
	if err != nil {
		return NewEnableResult(o.Dir), err
	}
	res := NewEnableResult(dir)
	res.ProjectName = o.ProjectName
	if res.ProjectName == "" {
		res.ProjectName = filepath.Base(dir)
	}
	if err := o.Env.requireGit("ralph measures progress with git; install it and run enable again"); err != nil {
		return res, err
	}
	if flat := FlatLayout(dir); len(flat) > 0 && !dirExists(filepath.Join(dir, ".ralph")) {
		return res, errorf(KindRefused, nil,
			"%s uses the old flat layout (%s at the top level): run `ralph migrate` to move it into .ralph/", dir, flat[0])
	}
	res.AlreadyEnabled = allExist(dir, RequiredFiles)

	stacks, err := Detect(os.DirFS(dir))
	if err != nil {
		return res, fmt.Errorf("detect the stack: %w", err)
	}
	if !o.NoStack {
		res.Stack = append(res.Stack, stacks...)
	}
	if len(stacks) == 0 {
		res.Warnings = append(res.Warnings, "no known build system found: fill in the commands in "+AgentPath)
	}

	var tasks []Task
	var prds []string
	for _, src := range o.Sources {
		ts, err := src.Tasks(ctx)
		if err != nil {
			return res, err
		}
		if len(ts) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("no tasks found in %s (list items and headings become tasks)", src.Describe()))
		}
		tasks = append(tasks, ts...)
		if fsrc, ok := src.(FileSource); ok && fsrc.Format == FormatPRD {
			prds = append(prds, fsrc.Path)
		}
	}

	w := &writer{root: dir, force: o.Force}
	planExisted := fileExists(filepath.Join(dir, PlanPath))
	if err := writeProject(w, res.ProjectName, res.Stack, tasks); err != nil {
		return res, err
	}
	// The PRD goes along as a spec, so the agent sees the whole document and
	// not only the task lines drawn from it.
	for _, p := range prds {
		if err := keepSpec(w, p); err != nil {
			return res, err
		}
	}
	if planExisted && !o.Force && len(o.Sources) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d task(s) not imported: %s exists (--force replaces it)", len(tasks), PlanPath))
	} else {
		res.TasksImported = len(tasks)
	}
	if !insideRepo(ctx, o.Env.git(), dir) {
		res.Warnings = append(res.Warnings, "not a git repository: ralph measures progress with git; run `git init` and commit")
	}
	res.FilesCreated = append(res.FilesCreated, w.created...)
	res.FilesUpdated = append(res.FilesUpdated, w.updated...)
	res.FilesSkipped = append(res.FilesSkipped, w.skipped...)
	res.Warnings = append(res.Warnings, w.notes...)
	res.Enabled = !res.AlreadyEnabled || o.Force
	return res, nil
}

// writeProject writes ralph's files through w: the three the loop needs,
// the specs directory, .ralphrc and the .gitignore entries.
func writeProject(w *writer, name string, stacks []Stack, tasks []Task) error {
	for _, f := range []struct {
		rel  string
		data []byte
	}{
		{PromptPath, Prompt(name)},
		{PlanPath, FixPlan(name, tasks)},
		{AgentPath, AgentNotes(name, stacks)},
		{RalphrcPath, Ralphrc(name, ProjectType(stacks), AllowedTools(stacks), VerifyCommand(stacks))},
	} {
		if err := w.put(f.rel, f.data); err != nil {
			return err
		}
	}
	// An empty directory cannot be committed; a placeholder keeps it, but
	// only where the directory is not there already.
	if !dirExists(filepath.Join(w.root, ".ralph", "specs")) {
		if err := w.put(SpecsKeep, nil); err != nil {
			return err
		}
	}
	return w.gitignore()
}

func keepSpec(w *writer, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	rel := ".ralph/specs/" + specName(path)
	abs, _ := filepath.Abs(path)
	dst := filepath.Join(w.root, filepath.FromSlash(rel))
	if abs == dst {
		return nil // the document already lives in specs/
	}
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
		return nil // copied by an earlier run
	}
	return w.keep(rel, data)
}

// projectDir resolves dir and checks it is a directory (when mustExist).
func projectDir(dir string, mustExist bool) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, err
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if mustExist {
			return abs, errorf(KindNotFound, err, "%s: no such directory", dir)
		}
		return abs, nil
	case err != nil:
		return abs, err
	case !info.IsDir():
		return abs, errorf(KindBadInput, nil, "%s is not a directory", dir)
	}
	return abs, nil
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func allExist(dir string, rels []string) bool {
	return !slices.ContainsFunc(rels, func(rel string) bool {
		return !fileExists(filepath.Join(dir, filepath.FromSlash(rel)))
	})
}

// IsEnabled reports whether dir already has the files `ralph run` needs.
func IsEnabled(dir string) bool { return allExist(dir, RequiredFiles) }
