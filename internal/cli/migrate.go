package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/scaffold"
)

type migrateOptions struct {
	IO     IO
	Dir    string
	Force  bool
	DryRun bool
	JSON   bool
	Now    func() time.Time
}

// newMigrateCmd builds `ralph migrate`; runF replaces runMigrate in flag
// tests.
func newMigrateCmd(ios IO, runF func(context.Context, *migrateOptions) error) *cobra.Command {
	opts := &migrateOptions{IO: ios, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Move an old flat-layout project (PROMPT.md, @fix_plan.md at the top) into .ralph/",
		Long: `Early versions of the bash tool kept PROMPT.md, @fix_plan.md, @AGENT.md and
specs/ at the top of the project. migrate moves them into .ralph/ (as
PROMPT.md, fix_plan.md, AGENT.md and specs/; fix_plan.md and AGENT.md without
the @ are moved too), and points the prompt's references to those files at
their new places.

Everything it moves or replaces is first copied to
.ralph-migrate-backup-<time>/ in the project; delete that directory once you
have checked the result. Files already in .ralph/ are not replaced without
--force. --dry-run shows the moves and changes nothing. Old state files
(.call_count, .exit_signals, …) are not moved: ralph does not read them.

` + lifecycleExitCodes,
		Example: `  ralph migrate --dry-run
  ralph migrate
  ralph migrate --json -C path/to/project`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runMigrate)(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Dir, "dir", "C", ".", "project directory")
	f.BoolVar(&opts.Force, "force", false, "replace files already in .ralph/ (they are backed up first)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "show what would be moved; change nothing")
	f.BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	return exitTable(cmd, lifecycleTable)
}

func runMigrate(ctx context.Context, opts *migrateOptions) error {
	res, err := scaffold.Migrate(ctx, scaffold.MigrateOptions{Dir: opts.Dir, Force: opts.Force, DryRun: opts.DryRun, Now: opts.Now()})
	if opts.JSON {
		if err != nil {
			res.Error = err.Error()
		}
		printJSON(opts.IO.Out, res)
	} else if err == nil {
		printMigrate(opts.IO, res)
	}
	if err != nil {
		return err
	}
	if res.AlreadyMigrated {
		return errAlreadyDone
	}
	return nil
}

func printMigrate(ios IO, res *scaffold.MigrateResult) {
	if res.AlreadyMigrated {
		fmt.Fprintf(ios.Out, "%s already uses .ralph/: nothing to migrate\n", res.ProjectDir)
		return
	}
	verb := "moved"
	if res.DryRun {
		verb = "would move"
		fmt.Fprintf(ios.Out, "dry run: nothing changed in %s\n", res.ProjectDir)
	} else {
		fmt.Fprintf(ios.Out, "migrated %s to the .ralph/ layout\n", res.ProjectDir)
	}
	for _, m := range res.Moves {
		fmt.Fprintf(ios.Out, "  %s %s -> %s\n", verb, m.From, m.To)
	}
	for _, r := range res.Replaced {
		fmt.Fprintf(ios.Out, "  replaced %s (the old one is in the backup)\n", r)
	}
	for _, r := range res.Rewritten {
		fmt.Fprintf(ios.Out, "  updated the paths in %s\n", r)
	}
	if res.DryRun {
		fmt.Fprintf(ios.Out, "  would back up to %s/\n", res.BackupDir)
	} else {
		fmt.Fprintf(ios.Out, "  backup: %s/ (delete it once you have checked the result)\n", res.BackupDir)
	}
	printWarnings(ios.Err, res.Warnings)
	if !res.DryRun {
		fmt.Fprintln(ios.Out, "Next: review and commit the move; `ralph enable` adds a missing .ralphrc and .gitignore entries.")
	}
}
