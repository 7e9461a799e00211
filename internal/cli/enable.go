package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"ralph/internal/scaffold"
)

type enableOptions struct {
	IO             IO
	Dir            string
	Name           string
	PRD            string
	Checklist      string
	GitHubLabel    string
	GitHubLimit    int
	GitHubRepo     string
	GitHubAPI      string
	Force          bool
	NonInteractive bool
	JSON           bool
}

// newEnableCmd builds `ralph enable`; runF replaces runEnable in flag tests.
func newEnableCmd(ios IO, runF func(context.Context, *enableOptions) error) *cobra.Command {
	opts := &enableOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "enable",
		Short: "Make the current repository a ralph project (templates, detected commands, tasks)",
		Long: `Adds ralph's files to an existing project: .ralph/PROMPT.md, .ralph/fix_plan.md,
.ralph/AGENT.md (filled with the build, test and run commands of the detected
stack), .ralph/specs/, .ralphrc, and ralph's state files in .gitignore.

Existing files are never replaced without --force (and then only ralph's
own), .gitignore is only appended to, and nothing is committed. When the
detected build, test or lint commands are not in ralph's default tool
allow-list (pnpm run, uv run, dotnet…), .ralphrc's ALLOWED_TOOLS allows
exactly those. Running it again replaces nothing: it says the project is
already enabled (exit 10) and only adds what is missing, such as .ralphrc.

Tasks for the plan can come from a PRD or spec (--from-prd: headings and list
items become tasks, no agent involved; the document is also kept in
.ralph/specs/) or from an existing checklist (--from-checklist: its - [ ]
items). On a terminal, a short form asks for the project name, confirms the
detected commands and offers the task sources; --non-interactive or --json
skip it.

` + lifecycleExitCodes,
		Example: `  ralph enable
  ralph enable --non-interactive --from-prd docs/prd.md
  ralph enable --json --from-checklist TODO.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runEnable)(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Dir, "dir", "C", ".", "project directory")
	f.StringVar(&opts.Name, "name", "", "project name (default: the directory's name)")
	f.StringVar(&opts.PRD, "from-prd", "", "import tasks from a PRD or spec `FILE` (Markdown or text)")
	f.StringVar(&opts.Checklist, "from-checklist", "", "import the - [ ] items of a checklist `FILE`")
	f.StringVar(&opts.GitHubLabel, "from-github-label", "", "import the open GitHub issues with this `LABEL` (most urgent first)")
	f.IntVar(&opts.GitHubLimit, "github-limit", 30, "at most this many issues with --from-github-label")
	f.StringVar(&opts.GitHubRepo, "github-repo", "", "owner/name (default: the origin remote)")
	f.StringVar(&opts.GitHubAPI, "github-api", "", "GitHub REST API root (default $GITHUB_API_URL, else from the host)")
	f.BoolVar(&opts.Force, "force", false, "replace ralph's files that already exist")
	f.BoolVar(&opts.NonInteractive, "non-interactive", false, "never ask; use flags and detected values")
	f.BoolVar(&opts.JSON, "json", false, "print the result as one JSON object (implies --non-interactive)")
	return exitTable(cmd, lifecycleTable)
}

func runEnable(ctx context.Context, opts *enableOptions) error {
	res := scaffold.NewEnableResult(opts.Dir)
	fail := func(err error) error {
		if opts.JSON {
			res.Error = err.Error()
			printJSON(opts.IO.Out, res)
		}
		return err
	}
	if opts.PRD != "" && opts.Checklist != "" {
		return fail(&scaffold.Error{Kind: scaffold.KindBadInput, Msg: "--from-prd and --from-checklist cannot be combined; import one, then edit the plan"})
	}
	o := scaffold.EnableOptions{Dir: opts.Dir, ProjectName: opts.Name, Force: opts.Force}
	answers := scaffold.EnableAnswers{ProjectName: opts.Name}
	switch {
	case opts.PRD != "":
		answers.Source, answers.File = scaffold.SourcePRD, opts.PRD
	case opts.Checklist != "":
		answers.Source, answers.File = scaffold.SourceChecklist, opts.Checklist
	}
	if opts.GitHubLabel != "" {
		if opts.PRD != "" || opts.Checklist != "" {
			return fail(&scaffold.Error{Kind: scaffold.KindBadInput, Msg: "--from-github-label cannot be combined with a file source"})
		}
		o.Sources = append(o.Sources, githubTasks{dir: opts.Dir, repo: opts.GitHubRepo, label: opts.GitHubLabel, api: opts.GitHubAPI, limit: opts.GitHubLimit})
	}

	if !opts.NonInteractive && !opts.JSON && stdinIsTerminal(opts.IO.In) && (opts.Force || !scaffold.IsEnabled(opts.Dir)) {
		if err := askEnable(ctx, opts, &answers, &o); err != nil {
			return fail(err)
		}
	}
	switch answers.Source {
	case scaffold.SourcePRD:
		o.Sources = append(o.Sources, scaffold.FileSource{Path: answers.File, Format: scaffold.FormatPRD})
	case scaffold.SourceChecklist:
		o.Sources = append(o.Sources, scaffold.FileSource{Path: answers.File, Format: scaffold.FormatChecklist})
	}
	res, err := scaffold.Enable(ctx, o)
	if err != nil {
		return fail(err)
	}
	if opts.JSON {
		printJSON(opts.IO.Out, res)
	} else {
		printEnable(opts.IO, res)
	}
	out := opts.IO.Out
	if opts.JSON {
		out = io.Discard
	}
	if err := trustWritten(out, res.ProjectDir, append(res.FilesCreated, res.FilesUpdated...)); err != nil {
		return fail(err)
	}
	if res.AlreadyEnabled && !res.Enabled {
		return errAlreadyDone
	}
	return nil
}

func askEnable(ctx context.Context, opts *enableOptions, a *scaffold.EnableAnswers, o *scaffold.EnableOptions) error {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	if a.ProjectName == "" {
		a.ProjectName = filepath.Base(dir)
	}
	stacks, err := scaffold.Detect(os.DirFS(dir))
	if err != nil {
		// Enable itself reports a missing directory with its own exit code.
		return nil
	}
	accessible := os.Getenv("ACCESSIBLE") != ""
	if err := scaffold.AskEnable(ctx, opts.IO.In, opts.IO.Out, accessible, stacks, a); err != nil {
		return err
	}
	o.ProjectName = a.ProjectName
	o.NoStack = len(stacks) > 0 && !a.UseStack
	return nil
}

// stdinIsTerminal: the form needs a real terminal on stdin; a pipe, a file or
// /dev/null (a character device, but no terminal) means a script.
func stdinIsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func printEnable(ios IO, res *scaffold.EnableResult) {
	switch {
	case res.AlreadyEnabled && !res.Enabled && len(res.FilesCreated)+len(res.FilesUpdated) == 0:
		fmt.Fprintf(ios.Out, "%s is already enabled: nothing changed (--force rewrites ralph's files)\n", res.ProjectDir)
		printWarnings(ios.Err, res.Warnings)
		return
	case res.AlreadyEnabled && !res.Enabled:
		fmt.Fprintf(ios.Out, "%s is already enabled; added what was missing:\n", res.ProjectDir)
	default:
		fmt.Fprintf(ios.Out, "%s is now a ralph project%s\n", res.ProjectDir, stackSummary(res.Stack))
	}
	printFiles(ios.Out, res.FilesCreated, res.FilesUpdated, res.FilesSkipped)
	if res.TasksImported > 0 {
		fmt.Fprintf(ios.Out, "  imported %d task(s) into %s\n", res.TasksImported, scaffold.PlanPath)
	}
	printWarnings(ios.Err, res.Warnings)
	if res.Enabled {
		fmt.Fprintf(ios.Out, "Next: check %s and %s, put the specifications in .ralph/specs/, then run `ralph run`.\n",
			scaffold.PlanPath, scaffold.AgentPath)
	}
}

func stackSummary(stacks []scaffold.Stack) string {
	if len(stacks) == 0 {
		return ""
	}
	names := make([]string, len(stacks))
	for i, s := range stacks {
		names[i] = s.Name
		if s.Dir != "." {
			names[i] += " in " + s.Dir + "/"
		}
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func printFiles(w io.Writer, created, updated, skipped []string) {
	for _, f := range created {
		fmt.Fprintf(w, "  created  %s\n", f)
	}
	for _, f := range updated {
		fmt.Fprintf(w, "  updated  %s\n", f)
	}
	for _, f := range skipped {
		fmt.Fprintf(w, "  kept     %s (exists)\n", f)
	}
}

func printWarnings(w io.Writer, warnings []string) {
	for _, m := range warnings {
		fmt.Fprintln(w, "ralph: warning:", m)
	}
}
