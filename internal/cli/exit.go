package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"ralph/internal/github"
	"ralph/internal/importer"
	"ralph/internal/reason"
	"ralph/internal/scaffold"
)

// Commands return errors; exitCode alone turns them into exit codes and
// what stderr says about them. A command whose help documents its own
// table names it with exitTable.

// Exit codes of setup, enable and migrate. They sit apart from `ralph
// run`'s 2–8 so a script chaining commands never mistakes a refusal for a
// circuit breaker; 1 stays the general error, as everywhere in ralph.
const (
	exitAlreadyDone = 10 // already enabled / already migrated: nothing to do
	exitBadArgs     = 11 // invalid or conflicting flags and arguments
	exitNotFound    = 12 // a file or directory named on the command line does not exist
	exitMissingDep  = 13 // git is not installed
	exitRefused     = 14 // would overwrite existing files: --force allows it
)

const lifecycleExitCodes = `Exit codes: 0 done, 1 other error, 10 already done (nothing replaced),
11 bad arguments, 12 file or directory not found, 13 git not installed,
14 refused to overwrite (use --force).`

// The tables a command can follow instead of ralph's general one.
const (
	exitTableKey    = "exit-codes"
	lifecycleTable  = "lifecycle" // setup, enable, migrate
	importTable     = "import"
	generalExitCode = 1
)

// exitTable marks cmd as following table.
func exitTable(cmd *cobra.Command, table string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[exitTableKey] = table
	return cmd
}

// ExitError carries a specific exit code out of a command: another
// process's (the built-in demo agent's) or one the command documents.
type ExitError struct {
	Code int
	Err  error // may be nil: the command already reported what happened
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError is a command line ralph cannot act on: a wrong flag, value or
// argument. stderr points to the help.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// stoppedError is a loop that ended without finishing the work; the loop's
// own lines have said why, and the reason picks the exit code.
type stoppedError struct{ Reason reason.Reason }

func (e stoppedError) Error() string { return "the loop stopped: " + string(e.Reason) }

// loopResult is the error of a finished loop: none when the work is done.
func loopResult(r reason.Reason) error {
	if r.ExitCode() == 0 {
		return nil
	}
	return stoppedError{r}
}

var (
	// errSilent fails a command that has already said why (doctor's report).
	errSilent = errors.New("failed; reported above")
	// errAlreadyDone: setup, enable or migrate found nothing to do and said so.
	errAlreadyDone = errors.New("already done; reported above")
)

// usageArgs makes a wrong number of arguments a usage error, as a wrong
// flag is, in cmd and every command below it.
func usageArgs(cmd *cobra.Command) {
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		usageArgs(c)
	}
}

// exitCode is the one place where errors become exit codes. cmd is the
// command that ran (nil: none was found); stderr gets what the user should
// read about err.
func exitCode(cmd *cobra.Command, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	code, msg, hint := classify(cmd, err)
	if msg != "" {
		fmt.Fprintln(stderr, "ralph:", safeText(msg))
	}
	if hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	return code
}

// classify is err's exit code, the message to print ("" for none) and a
// pointer to the help for usage errors.
func classify(cmd *cobra.Command, err error) (code int, msg, hint string) {
	table := ""
	if cmd != nil {
		table = cmd.Annotations[exitTableKey]
	}
	var (
		ee      *ExitError
		ue      usageError
		stopped stoppedError
	)
	switch {
	case errors.As(err, &ee):
		if ee.Err != nil {
			msg = ee.Err.Error()
		}
		return ee.Code, msg, ""
	case errors.Is(err, errSilent):
		return generalExitCode, "", ""
	case errors.Is(err, errAlreadyDone):
		return exitAlreadyDone, "", ""
	case errors.As(err, &stopped):
		return stopped.Reason.ExitCode(), "", ""
	case errors.As(err, &ue) && table == lifecycleTable:
		return exitBadArgs, err.Error(), fmt.Sprintf("Run 'ralph %s --help' for usage.", cmd.Name())
	case errors.As(err, &ue):
		return generalExitCode, err.Error(), "Run 'ralph --help' for usage."
	case table == importTable && errors.Is(err, context.Canceled):
		return 130, "interrupted", ""
	}
	switch table {
	case lifecycleTable:
		return lifecycleCode(err), err.Error(), ""
	case importTable:
		return importCode(err), err.Error(), ""
	}
	return generalExitCode, err.Error(), ""
}

// lifecycleCode is the table of setup, enable and migrate.
func lifecycleCode(err error) int {
	switch scaffold.KindOf(err) {
	case scaffold.KindBadInput:
		return exitBadArgs
	case scaffold.KindNotFound:
		return exitNotFound
	case scaffold.KindMissingDependency:
		return exitMissingDep
	case scaffold.KindRefused:
		return exitRefused
	}
	return generalExitCode
}

// importCode is `ralph import`'s table (its help lists it).
func importCode(err error) int {
	var (
		ie *importer.IncompleteError
		nm *importer.NoMatchError
		rl *github.RateLimitError
	)
	switch {
	case errors.As(err, &ie):
		return 2
	case errors.As(err, &nm):
		return 3
	case errors.As(err, &rl):
		return 4
	}
	return generalExitCode
}
