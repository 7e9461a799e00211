package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/config"
	"ralph/internal/scaffold"
	"ralph/internal/trust"
)

// UntrustedError is the refusal to run what a repository's .ralphrc chose
// before the user has trusted it. It shows what would run.
type UntrustedError struct {
	Dir      string
	Settings []config.Setting
	Changed  bool // a different content of this .ralphrc was trusted before
}

func (e *UntrustedError) Error() string {
	var b strings.Builder
	what := "chooses what ralph runs, and you have not trusted it"
	if e.Changed {
		what = "chooses what ralph runs and has changed since you trusted it"
	}
	fmt.Fprintf(&b, "%s %s:\n", filepath.Join(e.Dir, ".ralphrc"), what)
	for _, s := range e.Settings {
		fmt.Fprintf(&b, "  %s: %s=%s\n", s.Source, s.Key, s.Value)
	}
	fmt.Fprintf(&b, "nothing was run. Read the file; if you trust it, run `ralph trust -C %s` "+
		"(or set these in your environment or with flags instead)", e.Dir)
	return b.String()
}

// Short is the refusal on one line, for doctor's report.
func (e *UntrustedError) Short() string {
	var parts []string
	for _, s := range e.Settings {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", s.Key, s.Value, s.Source))
	}
	state := "not trusted"
	if e.Changed {
		state = "changed since you trusted it"
	}
	return fmt.Sprintf("the project's .ralphrc chooses %s and is %s; review it, then `ralph trust`",
		strings.Join(parts, ", "), state)
}

// requireTrust refuses a configuration in which the project's .ralphrc
// chooses a program or its arguments, unless that very .ralphrc is trusted.
func requireTrust(dir string, cfg config.Config) error {
	need := config.NeedsTrust(cfg)
	if len(need) == 0 {
		return nil
	}
	rc := filepath.Join(dir, ".ralphrc")
	content, err := os.ReadFile(rc)
	if err != nil {
		return err
	}
	ts, err := trust.Default()
	if err != nil {
		return err
	}
	ok, err := ts.Trusted(rc, content)
	if err != nil || ok {
		return err
	}
	changed := false
	if path, _, kerr := trust.Key(rc, nil); kerr == nil {
		if es, lerr := ts.List(); lerr == nil {
			for _, e := range es {
				changed = changed || e.Path == path
			}
		}
	}
	return &UntrustedError{Dir: dir, Settings: need, Changed: changed}
}

type trustOptions struct {
	IO      IO
	Project projectFlags
	Revoke  bool
	List    bool
}

// newTrustCmd builds `ralph trust`; runF replaces runTrust in flag tests.
func newTrustCmd(ios IO, runF func(context.Context, *trustOptions) error) *cobra.Command {
	opts := &trustOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Allow this project's .ralphrc to choose the programs ralph runs (AGENT_CMD, *_ARGS…)",
		Long: `A repository's .ralphrc may name the agent command, its arguments or a
wider agent sandbox. ralph runs none of that until you trust the file:
` + "`ralph trust`" + ` records its path and content hash outside the repository, without
asking (scripts and CI can call it). A changed .ralphrc needs trust again.
Settings from your environment or flags need no trust.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Revoke && opts.List {
				return usageError{errors.New("--revoke and --list cannot be combined")}
			}
			return orDefault(runF, runTrust)(cmd.Context(), opts)
		},
	}
	opts.Project.add(cmd, false)
	cmd.Flags().BoolVar(&opts.Revoke, "revoke", false, "forget the trust given to this project's .ralphrc")
	cmd.Flags().BoolVar(&opts.List, "list", false, "list the trusted .ralphrc files")
	return cmd
}

func runTrust(_ context.Context, opts *trustOptions) error {
	dir, err := filepath.Abs(opts.Project.dir)
	if err != nil {
		return err
	}
	ts, err := trust.Default()
	if err != nil {
		return err
	}
	out, flush := safeWriter(opts.IO.Out)
	defer flush()
	rc := filepath.Join(dir, ".ralphrc")
	switch {
	case opts.List:
		return listTrusted(out, ts)
	case opts.Revoke:
		removed, err := ts.Revoke(rc)
		if err != nil {
			return err
		}
		if !removed {
			fmt.Fprintf(out, "%s was not trusted\n", rc)
			return nil
		}
		fmt.Fprintf(out, "no longer trusted: %s\n", rc)
		return nil
	}
	return trustProject(out, opts.IO.Err, ts, dir)
}

func trustProject(out, errw io.Writer, ts trust.Store, dir string) error {
	rc := filepath.Join(dir, ".ralphrc")
	content, err := os.ReadFile(rc)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("nothing to trust: %s has no .ralphrc", dir)
	}
	if err != nil {
		return err
	}
	// Say what is being allowed, from the very bytes that are recorded.
	layer, _, perr := config.ParseRalphrcEnv(rc, content, os.LookupEnv)
	if perr == nil {
		cfg, _, _ := config.Resolve(config.Defaults(), config.Layer(layer), nil, nil)
		for _, s := range config.NeedsTrust(cfg) {
			fmt.Fprintf(out, "allows %s=%s (%s)\n", s.Key, s.Value, s.Source)
		}
	}
	e, err := ts.Trust(rc, content, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "trusted: %s (sha256 %s…); a changed file needs `ralph trust` again\n", e.Path, e.SHA256[:12])
	return nil
}

func listTrusted(out io.Writer, ts trust.Store) error {
	es, err := ts.List()
	if err != nil {
		return err
	}
	if len(es) == 0 {
		fmt.Fprintln(out, "no trusted .ralphrc files")
		return nil
	}
	for _, e := range es {
		state := "changed since (needs trust again)"
		if data, err := os.ReadFile(e.Path); err != nil {
			state = "gone"
		} else if _, sum, _ := trust.Key(e.Path, data); sum == e.SHA256 {
			state = "trusted"
		}
		fmt.Fprintf(out, "%s  %s  %s  %s\n", e.Trusted.Local().Format("2006-01-02 15:04"), e.SHA256[:12], state, e.Path)
	}
	return nil
}

// trustWritten trusts the .ralphrc that `ralph setup` or `ralph enable`
// just wrote (files are the ones it created or replaced), when that file
// names something to run (the VERIFY_CMD it detected): the user asked for
// the file, so it is theirs, and the next `ralph run` must not refuse it.
// It says so, with how to take it back.
func trustWritten(out io.Writer, dir string, files []string) error {
	if !slices.Contains(files, scaffold.RalphrcPath) {
		return nil
	}
	rc := filepath.Join(dir, scaffold.RalphrcPath)
	content, err := os.ReadFile(rc)
	if err != nil {
		return err
	}
	layer, _, err := config.ParseRalphrcEnv(rc, content, os.LookupEnv)
	if err != nil {
		return err
	}
	cfg, _, _ := config.Resolve(config.Defaults(), config.Layer(layer), nil, nil)
	if len(config.NeedsTrust(cfg)) == 0 {
		return nil
	}
	ts, err := trust.Default()
	if err != nil {
		return err
	}
	if err := trustProject(out, io.Discard, ts, dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "(ralph wrote this .ralphrc for you; `ralph trust --revoke -C %s` takes the trust back)\n", dir)
	return nil
}
