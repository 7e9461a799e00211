package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"ralph/internal/config"
	"ralph/internal/doctor"
)

const doctorLong = `Checks, without changing anything, what ralph run needs: the configuration
(.ralphrc and environment), the .ralph/ layout and required files, the plan,
the state files, the circuit breaker, the run lock, the agent CLI and its
version (against CLAUDE_MIN_VERSION), credentials (named, never printed), the
git repository and its state, and the free disk space.

One line per check. On a terminal the marks are ✓ ! ✗ in colour; when NO_COLOR
is set or the output is not a terminal they are the words ok, warn and FAIL.
--json prints {"checks": [{"name", "status": "ok|warn|fail", "detail"}],
"blocking": bool}.

Exit codes: 0 when nothing blocks a run (warnings alone included), 1 when a
check failed (or the directory cannot be examined at all).`

type doctorOptions struct {
	IO   IO
	Dir  string
	JSON bool
}

// newDoctorCmd builds `ralph doctor`; runF replaces runDoctor in flag tests.
func newDoctorCmd(ios IO, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the agent, credentials, git, .ralph/, configuration and disk before a run",
		Long:  doctorLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orDefault(runF, runDoctor)(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Dir, "dir", "C", ".", "project directory")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}

func runDoctor(ctx context.Context, opts *doctorOptions) error {
	ios := opts.IO
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	p := doctorProject(dir)
	report := doctor.Run(ctx, p, doctor.System())
	out, flush := redactedWriter(ios.Out)
	defer flush()
	fancy := fancyOutput(ios)
	ios.Out = out
	if opts.JSON {
		err = doctor.WriteJSON(ios.Out, report)
	} else {
		err = doctor.WriteText(ios.Out, report, doctor.Style{Fancy: fancy})
	}
	if err != nil {
		return err
	}
	if report.Blocking {
		return errSilent
	}
	return nil
}

// doctorProject resolves the configuration as `ralph run` would and keeps
// its warnings for the config check instead of printing them.
func doctorProject(dir string) doctor.Project {
	var warn bytes.Buffer
	cfg, skipped, err := readConfig(dir, config.Layer{}, &warn)
	var ve *config.ValueError
	if err != nil && !errors.As(err, &ve) {
		// The .ralphrc could not be read at all; the other checks still
		// deserve an answer, so they see the defaults.
		cfg = config.Defaults()
	}
	var warns []string
	for l := range strings.SplitSeq(warn.String(), "\n") {
		if l = strings.TrimPrefix(strings.TrimSpace(l), "ralph: warning: "); l != "" && !isSkipped(l, skipped) {
			warns = append(warns, l)
		}
	}
	if err == nil {
		// `ralph run` refuses lines it cannot read: so does the check.
		err = unreadable(skipped)
	}
	p := doctor.Project{Dir: dir, Config: cfg, ConfigWarnings: warns, ConfigErr: err}
	if terr := requireTrust(dir, cfg); terr != nil {
		p.Untrusted = terr
		var ue *UntrustedError
		if errors.As(terr, &ue) {
			p.Untrusted = errors.New(ue.Short())
		}
	}
	return p
}

func isSkipped(line string, skipped []config.Warning) bool {
	for _, w := range skipped {
		if w.String() == line {
			return true
		}
	}
	return false
}

// fancyOutput decides the marks: symbols and colour only for a person at a
// terminal who has not asked for no colour (https://no-color.org: any
// non-empty NO_COLOR) and whose terminal can show it.
func fancyOutput(ios IO) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(ios.Out)
}
