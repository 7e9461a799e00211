package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/plan"
)

// AllowedTools are the only tools the import's agent call gets: it writes
// three files and may read what it wrote. No shell: the document is
// untrusted, and a prompt injection that slipped past the rules should find
// nothing to run.
var AllowedTools = []string{"Write", "Read", "Edit"}

// ProjectFiles are the three files of the project in dir; ralphDir is
// relative to dir (".ralph") or absolute.
func ProjectFiles(dir, ralphDir string) Files {
	if ralphDir == "" {
		ralphDir = ".ralph"
	}
	if !filepath.IsAbs(ralphDir) {
		ralphDir = filepath.Join(dir, ralphDir)
	}
	return Files{
		Prompt:       filepath.Join(ralphDir, "PROMPT.md"),
		FixPlan:      filepath.Join(ralphDir, "fix_plan.md"),
		Requirements: filepath.Join(ralphDir, "specs", "requirements.md"),
	}
}

// Existing returns those of the files that already exist, so the caller can
// refuse to overwrite them without --force.
func (f Files) Existing() []string {
	var out []string
	for _, p := range f.List() {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Options are the agent call's settings.
type Options struct {
	// Dir is the project directory (absolute); the agent runs there.
	Dir string
	// Files are where the three files go (see ProjectFiles).
	Files Files
	// LogDir receives the call's stdout and stderr logs.
	LogDir    string
	Threshold int
	Timeout   time.Duration
	Model     string
	Effort    string
	Env       []string
	// Now names the log files (time.Now when nil).
	Now func() time.Time
}

// Prepared is an import ready to run: what a dry run shows.
type Prepared struct {
	Doc        Document
	Score      Score
	NeedsPlan  bool
	Invocation agent.Invocation
}

// Prepare scores the document and builds the agent call.
func Prepare(doc Document, opts Options) Prepared {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	in := PromptInput{Doc: doc, Score: ScoreDocument(doc), Threshold: opts.Threshold, Files: opts.Files}
	stamp := now().UTC().Format("20060102-150405")
	return Prepared{
		Doc: doc, Score: in.Score, NeedsPlan: in.NeedsPlan(),
		Invocation: agent.Invocation{
			Dir: opts.Dir, Prompt: BuildPrompt(in), OutputFormat: agent.FormatJSON,
			Timeout: opts.Timeout, AllowedTools: AllowedTools, Model: opts.Model, Effort: opts.Effort, Env: opts.Env,
			StdoutPath: filepath.Join(opts.LogDir, "import_"+stamp+".stdout.log"),
			StderrPath: filepath.Join(opts.LogDir, "import_"+stamp+".stderr.log"),
		},
	}
}

// Outcome is what an import left behind.
type Outcome struct {
	Result agent.Result
	Check  Check
}

// Check is the state of the three files after the agent ran.
type Check struct {
	// Written are the files that are there and new (display paths).
	Written []string
	// Problems say precisely what is missing or wrong, one per line.
	Problems []string
	// Tasks counts fix_plan.md's checkboxes when it could be read.
	Tasks plan.Counts
}

// OK reports whether all three files are there and usable.
func (c Check) OK() bool { return len(c.Problems) == 0 }

// IncompleteError is an import whose files are missing or unusable.
type IncompleteError struct {
	Problems []string
	// Agent notes how the agent call ended when that explains the gap
	// (timed out, failed, hit a usage limit); "" otherwise.
	Agent string
}

func (e *IncompleteError) Error() string {
	msg := "import incomplete: " + strings.Join(e.Problems, "; ")
	if e.Agent != "" {
		msg += " (" + e.Agent + ")"
	}
	return msg
}

// Run runs the agent once with the prepared call and checks the files. A
// file counts only if the call left it non-empty and different from what
// was there before (with --force an old file must not pass as new). err is
// an *IncompleteError when a file is missing or unusable, any other error
// when the agent could not be run at all.
func Run(ctx context.Context, ad agent.Adapter, p Prepared, files Files) (Outcome, error) {
	before := map[string][32]byte{}
	for _, f := range files.List() {
		if b, err := os.ReadFile(f); err == nil {
			before[f] = sha256.Sum256(b)
		}
	}
	for _, d := range []string{filepath.Dir(files.Prompt), filepath.Dir(files.Requirements), filepath.Dir(p.Invocation.StdoutPath)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Outcome{}, err
		}
	}
	res, err := ad.Run(ctx, p.Invocation)
	out := Outcome{Result: res}
	if err != nil {
		return out, err
	}
	if res.Interrupted {
		return out, context.Canceled
	}
	out.Check = CheckFiles(p.Invocation.Dir, files, before)
	if !out.Check.OK() {
		return out, &IncompleteError{Problems: out.Check.Problems, Agent: agentNote(res, p.Invocation.Dir)}
	}
	return out, nil
}

// CheckFiles looks at the three files: each must exist, be non-empty and
// differ from its content before the import (before maps path → SHA-256;
// absent means it did not exist), and fix_plan.md must hold at least one
// checkbox task as package plan reads it.
func CheckFiles(dir string, files Files, before map[string][32]byte) Check {
	var c Check
	for _, f := range files.List() {
		rel := display(dir, f)
		b, err := os.ReadFile(f)
		switch {
		case errors.Is(err, os.ErrNotExist):
			c.Problems = append(c.Problems, rel+" was not written")
			continue
		case err != nil:
			c.Problems = append(c.Problems, fmt.Sprintf("%s cannot be read: %v", rel, err))
			continue
		case len(bytes.TrimSpace(b)) == 0:
			c.Problems = append(c.Problems, rel+" is empty")
			continue
		}
		if old, ok := before[f]; ok && old == sha256.Sum256(b) {
			c.Problems = append(c.Problems, rel+" was not rewritten (unchanged since before the import)")
			continue
		}
		if f == files.FixPlan {
			c.Tasks = plan.Parse(b).Counts()
			if c.Tasks.Total == 0 {
				c.Problems = append(c.Problems, rel+" has no checkbox tasks (\"- [ ] task\")")
				continue
			}
		}
		c.Written = append(c.Written, rel)
	}
	return c
}

// agentNote explains a failed call in a few words.
func agentNote(res agent.Result, dir string) string {
	switch {
	case res.TimedOut:
		return fmt.Sprintf("the agent timed out after %s", res.Duration.Round(time.Second))
	case res.Analysis != nil && res.Analysis.UsageLimit.Detected:
		msg := "the agent hit a usage limit"
		if res.Analysis.UsageLimit.ResetsAt != "" {
			msg += " until " + res.Analysis.UsageLimit.ResetsAt
		}
		return msg
	case res.Analysis != nil && res.Analysis.SetupFailure.Detected:
		// The reason is in the agent's own output (Claude Code's "Not
		// logged in" is on stdout): say it, rather than point at a log.
		return "the agent cannot work as set up: " + res.Analysis.SetupFailure.Message
	case res.Analysis != nil && len(res.Analysis.PermissionDenials) > 0:
		return fmt.Sprintf("the agent was refused %s", res.Analysis.PermissionDenials[0].Tool)
	case res.ExitCode != 0:
		where := res.StderrPath
		if info, err := os.Stat(where); err == nil && info.Size() == 0 || err != nil {
			where = res.StdoutPath // an empty stderr log explains nothing
		}
		if res.Analysis != nil && res.Analysis.Summary != "" {
			return fmt.Sprintf("the agent exited with status %d: %s (see %s)", res.ExitCode, res.Analysis.Summary, display(dir, where))
		}
		return fmt.Sprintf("the agent exited with status %d; see %s", res.ExitCode, display(dir, where))
	case res.Analysis != nil && res.Analysis.IsError:
		return "the agent reported an error; see " + display(dir, res.StdoutPath)
	}
	return ""
}

// display is path relative to dir when it is inside it.
func display(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
