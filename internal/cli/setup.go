package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"ralph/internal/scaffold"
)

type setupOptions struct {
	IO    IO
	Dir   string
	Force bool
	JSON  bool
}

// newSetupCmd builds `ralph setup`; runF replaces runSetup in flag tests.
func newSetupCmd(ios IO, runF func(context.Context, *setupOptions) error) *cobra.Command {
	opts := &setupOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "setup NAME",
		Short: "Create a new ralph project directory with the templates and a first commit",
		Long: `Creates the directory NAME with .ralph/PROMPT.md, .ralph/fix_plan.md,
.ralph/AGENT.md, .ralph/specs/, .ralphrc, .gitignore and a README, runs
git init and commits exactly those files.

An existing directory that is not empty is refused unless --force; then
ralph's files are added to it, a README is never replaced, and if it already
is a git repository nothing is committed. For an existing project, use
` + "`ralph enable`" + ` inside it instead.

` + lifecycleExitCodes,
		Example: `  ralph setup my-app
  ralph setup --json my-app`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return orDefault(runF, runSetup)(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "write into a directory that is not empty (a README is never replaced)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	return exitTable(cmd, lifecycleTable)
}

func runSetup(ctx context.Context, opts *setupOptions) error {
	res, err := scaffold.Setup(ctx, scaffold.SetupOptions{Dir: opts.Dir, Force: opts.Force})
	if err == nil {
		out := opts.IO.Out
		if opts.JSON {
			out = io.Discard
		}
		err = trustWritten(out, res.ProjectDir, append(res.FilesCreated, res.FilesUpdated...))
	}
	if opts.JSON {
		if err != nil {
			res.Error = err.Error()
		}
		printJSON(opts.IO.Out, res)
	} else if err == nil || res.Created {
		printSetup(opts.IO, res, err == nil)
	}
	return err
}

// printSetup says what was made; the "Next" line only when nothing is left
// to fix, so a failed step is the last thing a newcomer reads.
func printSetup(ios IO, res *scaffold.SetupResult, ok bool) {
	fmt.Fprintf(ios.Out, "created the ralph project %s in %s%s\n", res.ProjectName, res.ProjectDir, stackSummary(res.Stack))
	printFiles(ios.Out, res.FilesCreated, res.FilesUpdated, res.FilesSkipped)
	switch {
	case res.Committed:
		fmt.Fprintf(ios.Out, "  committed %d file(s) in a new git repository (%.12s)\n", len(res.FilesCreated), res.Commit)
	case res.GitInitialized:
		fmt.Fprintln(ios.Out, "  initialised a git repository")
	}
	printWarnings(ios.Err, res.Warnings)
	if !ok {
		return
	}
	fmt.Fprintf(ios.Out, "Next: cd %s, write the specifications into .ralph/specs/ and the first tasks into %s, then run `ralph run`.\n",
		res.ProjectDir, scaffold.PlanPath)
}
