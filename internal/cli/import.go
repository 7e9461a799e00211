package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"ralph/internal/agent"
	"ralph/internal/config"
	"ralph/internal/github"
	"ralph/internal/gitx"
	"ralph/internal/importer"
)

const importLong = `Converts a product requirements document into a ralph project's working files
— .ralph/PROMPT.md, .ralph/fix_plan.md and .ralph/specs/requirements.md — by
running the agent once (JSON output, tools Write, Read and Edit only). The
document is handed over as data: instructions inside it are not followed.
Afterwards ralph checks that the three files exist, are new, and that
fix_plan.md has at least one checkbox task, and says exactly what is missing.

FILE is Markdown, text or JSON ("-" reads standard input). Instead of a FILE,
a GitHub issue can be the PRD: --github-issue N, #N, owner/repo#N or an issue
URL; or the first (--select first) or most urgent (--select priority: P0-P3,
priority:high, critical..., then the oldest) of the issues matching
--github-label, --github-milestone, --github-assignee and --github-search,
without those carrying an --exclude-label. N and lists use the repository of
the "origin" remote unless --github-repo names one.

A completeness score (0-100: acceptance criteria, checklists, sections,
length, code, concrete nouns) decides whether the agent first writes an
implementation plan (below --min-score).

NAME is a project directory to create; without it the current directory is
used. Existing files are never overwritten without --force.

GitHub: REST API at --github-api or $GITHUB_API_URL (GitHub Enterprise:
https://HOST/api/v3; default from the host), token from $GITHUB_TOKEN,
$GH_TOKEN or ` + "`gh auth token`" + `, never printed.

Exit codes: 0 imported, 1 usage, configuration, input or GitHub error,
2 the agent ran but files are missing or invalid, 3 no issue matched,
4 GitHub rate limit (the reset time is printed), 130 interrupted.`

// importOptions are `ralph import`'s flags and arguments.
type importOptions struct {
	IO         IO
	File, Name string
	Issue      string
	Labels     []string
	Search     string
	Milestone  string
	Assignee   string
	State      string
	Repo       string
	Exclude    []string
	Select     string
	Limit      int
	MinScore   int
	DryRun     bool
	Force      bool
	APIURL     string
	// Config holds the flags that are configuration keys (--agent-cmd,
	// --timeout, --model), so .ralphrc and the environment apply too.
	Config config.Layer
}

func (o *importOptions) github() bool {
	return o.Issue != "" || len(o.Labels) > 0 || o.Search != "" || o.Milestone != "" || o.Assignee != ""
}

// newImportCmd builds `ralph import`; runF replaces runImport in flag tests.
func newImportCmd(ios IO, runF func(context.Context, *importOptions) error) *cobra.Command {
	o := &importOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "import [FILE] [NAME]",
		Short: "Turn a PRD file or a GitHub issue into PROMPT.md, fix_plan.md and specs/requirements.md",
		Long:  importLong,
		Example: `  ralph import docs/prd.md
  ralph import prd.json my-app
  ralph import --github-issue 42
  ralph import --github-label ralph-task --select priority --exclude-label blocked --dry-run
  ralph import --github-issue https://ghe.example.com/team/svc/issues/7 --github-api https://ghe.example.com/api/v3`,
		Args: cobra.MaximumNArgs(2),
	}
	f := cmd.Flags()
	f.StringVar(&o.Issue, "github-issue", "", "import one issue: N, #N, owner/repo#N or an issue URL")
	f.StringSliceVar(&o.Labels, "github-label", nil, "choose among issues with this label (repeat or comma-separate: all must match)")
	f.StringVar(&o.Search, "github-search", "", "choose among issues found by this search (GitHub search syntax)")
	f.StringVar(&o.Milestone, "github-milestone", "", "choose among issues of this milestone (title or number)")
	f.StringVar(&o.Assignee, "github-assignee", "", "choose among issues assigned to this login")
	f.StringVar(&o.State, "github-state", "open", "issue state: open, closed or all")
	f.StringVar(&o.Repo, "github-repo", "", "repository owner/name (default: the origin remote)")
	f.StringSliceVar(&o.Exclude, "exclude-label", nil, "skip issues with this label (repeatable)")
	f.StringVar(&o.Select, "select", importer.SelectFirst, "which of several matching issues: first or priority")
	f.IntVar(&o.Limit, "limit", github.DefaultLimit, "fetch at most this many matching issues to choose from")
	f.IntVar(&o.MinScore, "min-score", importer.DefaultThreshold, "below this completeness score the agent first writes an implementation plan")
	f.BoolVar(&o.DryRun, "dry-run", false, "show what would be imported and the agent command; write nothing, call no agent")
	f.BoolVar(&o.Force, "force", false, "overwrite existing files, use a non-empty NAME directory")
	f.StringVar(&o.APIURL, "github-api", "", "GitHub REST API root (default $GITHUB_API_URL, else from the host)")
	keyed := map[string]string{"agent-cmd": "AGENT_CMD", "timeout": "CLAUDE_TIMEOUT_MINUTES", "model": "CLAUDE_MODEL"}
	f.String("agent-cmd", "", "agent executable, words split without a shell (default claude)")
	f.String("timeout", "", "minutes before the agent call is killed (default 15)")
	f.String("model", "", "model passed to the agent")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.Config = config.Layer{}
		for name, key := range keyed {
			if fl := f.Lookup(name); fl.Changed {
				o.Config.SetFlag(key, "--"+name, fl.Value.String())
			}
		}
		if err := o.setArgs(args); err != nil {
			return usageError{err}
		}
		return orDefault(runF, runImport)(cmd.Context(), o)
	}
	return exitTable(cmd, importTable)
}

// setArgs sorts the positional arguments and checks flag values.
func (o *importOptions) setArgs(args []string) error {
	if o.github() {
		if len(args) > 1 {
			return errors.New("give either FILE or a --github-… source, not both")
		}
		if len(args) == 1 {
			o.Name = args[0]
		}
	} else {
		if len(args) == 0 {
			return errors.New("nothing to import: give a FILE or a --github-issue, --github-label, --github-search, --github-milestone or --github-assignee")
		}
		o.File = args[0]
		if len(args) == 2 {
			o.Name = args[1]
		}
	}
	switch {
	case o.Select != importer.SelectFirst && o.Select != importer.SelectPriority:
		return fmt.Errorf("--select %q: want first or priority", o.Select)
	case o.State != "open" && o.State != "closed" && o.State != "all":
		return fmt.Errorf("--github-state %q: want open, closed or all", o.State)
	case o.Limit < 1:
		return fmt.Errorf("--limit %d: want 1 or more", o.Limit)
	case o.MinScore < 0 || o.MinScore > 100:
		return fmt.Errorf("--min-score %d: want 0 to 100", o.MinScore)
	case o.Issue != "" && (len(o.Labels) > 0 || o.Search != "" || o.Milestone != "" || o.Assignee != ""):
		return errors.New("--github-issue names one issue; it does not combine with --github-label, --github-search, --github-milestone or --github-assignee")
	}
	return nil
}

func runImport(ctx context.Context, o *importOptions) error {
	ios := o.IO
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	dir := cwd
	if o.Name != "" {
		if dir, err = filepath.Abs(o.Name); err != nil {
			return err
		}
	}
	// A new NAME has no .ralphrc yet; the current directory's still counts.
	cfgDir := dir
	if _, err := os.Stat(dir); err != nil {
		cfgDir = cwd
	}
	cfg, skipped, err := readConfig(cfgDir, o.Config, ios.Err)
	if err == nil {
		err = unreadable(skipped)
	}
	if err != nil {
		return err
	}
	if err := requireTrust(cfgDir, cfg); err != nil {
		return err
	}

	if o.DryRun {
		fmt.Fprintln(ios.Out, "dry run: nothing is written and no agent is called")
	}
	var found *importer.Found
	var doc importer.Document
	if o.github() {
		f, err := fetchGitHub(ctx, ios, o, cfgDir)
		if err != nil {
			return err
		}
		found, doc = &f, f.Doc
	} else if doc, err = readDocument(ios, o.File); err != nil {
		return err
	}

	files := importer.ProjectFiles(dir, cfg.RalphDir)
	ralphDir := filepath.Dir(files.Prompt)
	prep := importer.Prepare(doc, importer.Options{
		Dir: dir, Files: files, LogDir: filepath.Join(ralphDir, "logs"), Threshold: o.MinScore,
		Timeout: cfg.AgentTimeout, Model: cfg.AgentModel(cfg.AgentProvider), Effort: cfg.Effort, Env: agentEnv(cfg),
	})
	ad, err := agentAdapter(cfg)
	if err != nil {
		return err
	}
	if o.DryRun {
		return printImportDryRun(ios.Out, o, dir, files, found, prep, ad)
	}

	if err := checkTarget(dir, o.Name != "", files, o.Force); err != nil {
		return err
	}
	created, err := makeProjectDir(dir)
	if err != nil {
		return err
	}
	out := ios.Out
	fmt.Fprintf(out, "importing %s into %s\n", doc.Source, dir)
	fmt.Fprintf(out, "completeness %s\n", prep.Score)
	if prep.NeedsPlan {
		fmt.Fprintf(out, "below %d: the agent writes an implementation plan first\n", o.MinScore)
	}
	fmt.Fprintf(out, "running %s once (timeout %s)…\n", ad.Name(), strings.TrimSuffix(cfg.AgentTimeout.String(), "0s"))
	res, err := importer.Run(ctx, ad, prep, files)
	for _, w := range res.Check.Written {
		note := ""
		if filepath.Join(dir, w) == files.FixPlan || w == files.FixPlan {
			note = fmt.Sprintf(" (%d tasks, %d optional)", res.Check.Tasks.Total, res.Check.Tasks.OpenOptional)
		}
		fmt.Fprintf(out, "wrote %s%s\n", w, note)
	}
	if err != nil {
		if res.Result.StdoutPath != "" {
			fmt.Fprintf(ios.Err, "ralph: the agent's output is in %s\n", res.Result.StdoutPath)
		}
		return err
	}
	if created {
		fmt.Fprintf(out, "created %s\n", dir)
	}
	if r := res.Result; r.ExitCode != 0 || (r.Analysis != nil && r.Analysis.IsError) {
		fmt.Fprintf(ios.Err, "ralph: warning: the files are complete, but the agent ended with status %d; see %s\n", r.ExitCode, r.StdoutPath)
	}
	if _, err := os.Stat(filepath.Join(ralphDir, "AGENT.md")); err != nil {
		fmt.Fprintf(out, "next: write %s (build and test commands), then `ralph run`\n", filepath.Join(ralphDir, "AGENT.md"))
	} else {
		fmt.Fprintln(out, "next: `ralph run`")
	}
	return nil
}

func readDocument(ios IO, name string) (importer.Document, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(ios.In, 1<<20))
		name = "standard input"
	} else {
		data, err = os.ReadFile(name)
	}
	if errors.Is(err, os.ErrNotExist) {
		return importer.Document{}, fmt.Errorf("%s: no such file", name)
	}
	if err != nil {
		return importer.Document{}, err
	}
	return importer.ParseDocument(name, data)
}

// fetchGitHub resolves the repository, API root and token, and runs the
// query.
func fetchGitHub(ctx context.Context, ios IO, o *importOptions, gitDir string) (importer.Found, error) {
	q := importer.Query{Labels: o.Labels, Search: o.Search, Milestone: o.Milestone, Assignee: o.Assignee,
		State: o.State, Limit: o.Limit, Exclude: o.Exclude, Select: o.Select}
	if o.Issue != "" {
		ref, err := github.ParseIssueRef(o.Issue)
		if err != nil {
			return importer.Found{}, usageError{err}
		}
		q.Issue = &ref
	}
	// The origin remote gives the default repository and, for an
	// enterprise clone, the host; it is only an error to lack it when the
	// query needs a repository.
	remote, remoteErr := github.DefaultRepo(ctx, gitDir)
	switch {
	case o.Repo != "":
		r, err := github.ParseRepo(o.Repo)
		if err != nil {
			return importer.Found{}, usageError{fmt.Errorf("--github-repo: %w", err)}
		}
		r.Host = remote.Host
		q.Repo = r
	case remoteErr == nil:
		q.Repo = remote
	case q.NeedsRepo():
		return importer.Found{}, remoteErr
	}
	host := q.Repo.Host
	if q.Issue != nil && q.Issue.Repo.Host != "" {
		host = q.Issue.Repo.Host
	}
	base := o.APIURL
	if base == "" {
		base = os.Getenv("GITHUB_API_URL")
	}
	if base == "" {
		base = github.APIBase(host)
	}
	if u, err := url.Parse(base); err == nil && u.Host != "" && u.Host != "api.github.com" {
		host = u.Host // the token is for the server actually asked
	}
	token, from := github.TokenSource{Getenv: os.Getenv}.Token(ctx, host)
	c, err := github.New(github.Options{BaseURL: base, Token: token})
	if err != nil {
		return importer.Found{}, usageError{err}
	}
	if o.DryRun {
		if from == "" {
			from = "none (anonymous requests)"
		}
		fmt.Fprintf(ios.Out, "GitHub: %s, token: %s\n", c.BaseURL(), from)
	}
	return importer.FetchIssue(ctx, c, q)
}

// checkTarget refuses to overwrite: a NAME that exists and is not empty,
// or any of the three files, unless --force.
func checkTarget(dir string, named bool, files importer.Files, force bool) error {
	if force {
		return nil
	}
	if named {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return fmt.Errorf("%s exists and is not empty; use --force to import into it", dir)
		}
	}
	if ex := files.Existing(); len(ex) > 0 {
		rel := make([]string, len(ex))
		for i, p := range ex {
			rel[i], _ = filepath.Rel(dir, p)
		}
		return fmt.Errorf("%s already exist(s); use --force to replace", strings.Join(rel, ", "))
	}
	return nil
}

// makeProjectDir creates dir when missing and makes it a git repository
// (ralph measures progress with git), without committing anything.
func makeProjectDir(dir string) (created bool, err error) {
	if _, err := os.Stat(dir); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	if _, err := exec.LookPath("git"); err == nil {
		if _, err := gitx.AsUser(context.Background(), dir, "init", "-q"); err != nil {
			return true, fmt.Errorf("%s: %w", dir, err)
		}
	}
	return true, nil
}

func printImportDryRun(w io.Writer, o *importOptions, dir string, files importer.Files, found *importer.Found, prep importer.Prepared, ad agent.Adapter) error {
	if found != nil {
		fmt.Fprintf(w, "candidates (%d, --select %s):\n", len(found.Candidates), o.Select)
		for i, c := range found.Candidates {
			mark := " "
			if i == found.Chosen {
				mark = "*"
			}
			why := c.Priority.String()
			if c.PriorityLabel != "" {
				why += " (" + c.PriorityLabel + ")"
			}
			if c.Excluded != "" {
				why = "excluded (" + c.Excluded + ")"
			}
			fmt.Fprintf(w, "  %s %s  %s  %s\n", mark, c.Issue.Ref(), why, c.Issue.Title)
		}
	}
	fmt.Fprintf(w, "source: %s (%s, %d bytes)\n", prep.Doc.Source, prep.Doc.Format, len(prep.Doc.Text))
	fmt.Fprintf(w, "completeness: %d/100\n", prep.Score.Total)
	for _, p := range prep.Score.Parts {
		fmt.Fprintf(w, "  %-20s %2d/%-2d  %s\n", p.Name, p.Points, p.Max, p.Note)
	}
	plan := "no"
	if prep.NeedsPlan {
		plan = "yes (below " + strconv.Itoa(o.MinScore) + ")"
	}
	fmt.Fprintf(w, "implementation plan first: %s\n", plan)
	state := ""
	if _, err := os.Stat(dir); err != nil {
		state = " (would be created)"
	}
	fmt.Fprintf(w, "project: %s%s\n", dir, state)
	for _, f := range files.List() {
		rel, _ := filepath.Rel(dir, f)
		note := ""
		if _, err := os.Stat(f); err == nil {
			note = " (exists: needs --force)"
		}
		fmt.Fprintf(w, "would write: %s%s\n", rel, note)
	}
	argv, err := ad.Command(prep.Invocation)
	if err != nil {
		return err
	}
	argv[len(argv)-1] = fmt.Sprintf("<prompt: %d bytes>", len(prep.Invocation.Prompt))
	fmt.Fprintf(w, "agent: %s\n", strings.Join(argv, " "))
	fmt.Fprintf(w, "--- document ---\n%s", prep.Doc.Text)
	if !strings.HasSuffix(prep.Doc.Text, "\n") {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "--- end of document ---")
	return nil
}
