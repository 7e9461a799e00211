package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/huh"
)

// Task sources the interactive form offers.
const (
	SourceNone      = "none"
	SourcePRD       = "prd"
	SourceChecklist = "checklist"
	// GitHub issues join here once internal/github provides a TaskSource:
	// a "github" option asking for a label and a limit.
)

// EnableAnswers are what interactive `ralph enable` asks. Fields set before
// the call are the defaults; a Source already chosen (by a flag) is not
// asked again.
type EnableAnswers struct {
	ProjectName string
	UseStack    bool
	Source      string
	File        string
}

// ErrCancelled is returned when the user leaves the form (Esc, Ctrl-C).
var ErrCancelled = errors.New("enable cancelled; nothing was written")

// AskEnable runs the enable form on in/out. accessible uses plain prompts
// that read lines (screen readers, dumb terminals, and tests).
func AskEnable(ctx context.Context, in io.Reader, out io.Writer, accessible bool, stacks []Stack, a *EnableAnswers) error {
	// An empty answer keeps the default (accessible mode validates the raw
	// line before it falls back to the default, so the check must allow it).
	def := a.ProjectName
	fields := []huh.Field{
		huh.NewInput().Title("Project name").Value(&a.ProjectName).Validate(func(s string) error {
			if strings.TrimSpace(s) == "" && def == "" {
				return errors.New("the project needs a name")
			}
			return nil
		}),
	}
	if len(stacks) > 0 {
		a.UseStack = true
		fields = append(fields,
			huh.NewNote().Title("Detected").Description(describeStacks(stacks)),
			huh.NewConfirm().
				Title("Use these commands in .ralph/AGENT.md?").
				Affirmative("Yes").Negative("No, I will fill them in").
				Value(&a.UseStack))
	}
	askSource := a.Source == ""
	if askSource {
		a.Source = SourceNone
		fields = append(fields, huh.NewSelect[string]().
			Title("Where do the first tasks come from?").
			Options(
				huh.NewOption("Nowhere yet: the agent writes the plan from .ralph/specs/", SourceNone),
				huh.NewOption("A PRD or spec document (Markdown or text)", SourcePRD),
				huh.NewOption("An existing checklist (- [ ] items)", SourceChecklist),
			).
			Value(&a.Source))
	}
	if err := run(ctx, huh.NewForm(huh.NewGroup(fields...)), in, out, accessible); err != nil {
		return err
	}
	if a.ProjectName = strings.TrimSpace(a.ProjectName); a.ProjectName == "" {
		a.ProjectName = def
	}
	if !askSource || a.Source == SourceNone {
		return nil
	}
	// A second form: huh's accessible mode shows every group, hidden or not.
	path := huh.NewInput().Title("Path of the file").Value(&a.File).Validate(func(s string) error {
		if info, err := os.Stat(strings.TrimSpace(s)); err != nil || info.IsDir() {
			return fmt.Errorf("%q is not a readable file", s)
		}
		return nil
	})
	if err := run(ctx, huh.NewForm(huh.NewGroup(path)), in, out, accessible); err != nil {
		return err
	}
	a.File = strings.TrimSpace(a.File)
	return nil
}

func run(ctx context.Context, f *huh.Form, in io.Reader, out io.Writer, accessible bool) error {
	err := f.WithInput(in).WithOutput(out).WithAccessible(accessible).WithShowHelp(true).RunWithContext(ctx)
	if errors.Is(err, huh.ErrUserAborted) {
		return ErrCancelled
	}
	return err
}

func describeStacks(stacks []Stack) string {
	var b strings.Builder
	for i, s := range stacks {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s.Name)
		if s.Dir != "." {
			b.WriteString(" in " + s.Dir + "/")
		}
		if s.Commands.Test != "" {
			b.WriteString(": " + s.Commands.Test)
		}
	}
	return b.String()
}
