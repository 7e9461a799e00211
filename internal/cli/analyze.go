package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ralph/internal/agent/opencode"
	opencodewire "ralph/internal/agent/opencode/wire"
	"ralph/internal/analyze"
)

type analyzeOptions struct {
	IO           IO
	Path         string
	JSON         bool
	ExitCode     int
	AllowedTools string
	Now          time.Time // zero: the current time
	StderrPath   string
}

// newAnalyzeCmd builds `ralph analyze`; runF replaces runAnalyze in flag
// tests.
func newAnalyzeCmd(ios IO, runF func(context.Context, *analyzeOptions) error) *cobra.Command {
	opts := &analyzeOptions{IO: ios}
	var now string
	cmd := &cobra.Command{
		Use:   "analyze [FILE|-]",
		Short: "Explain how ralph reads one agent output (the \"why did it decide that?\" tool)",
		Long: `Reads one agent output — a Claude Code json result or stream-json transcript,
the older flat JSON schema, Codex exec --json, Gemini CLI json/stream-json,
OpenCode run --format json, or plain text — and prints what ralph makes of
it: status block, exit signal, completion indicators, questions, errors,
permission denials, usage limit, session and token usage.

With no FILE, or FILE "-", reads standard input. --json prints the analysis
object whose fields are a stable contract for scripts.`,
		Example: `  ralph analyze .ralph/logs/iteration_7_20261125T101500Z.stdout.log
  claude -p "…" --output-format json | ralph analyze --json --exit-code $? -
  ralph analyze --json --now 2026-11-20T20:00:00Z --exit-code 1 limit.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if now != "" {
				t, err := time.Parse(time.RFC3339, now)
				if err != nil {
					return usageError{fmt.Errorf("--now %q: want an RFC3339 time such as 2026-11-20T20:00:00Z", now)}
				}
				opts.Now = t
			}
			return orDefault(runF, runAnalyze)(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the analysis as one JSON object")
	f.IntVar(&opts.ExitCode, "exit-code", -1, "the agent process's exit status (-1: unknown)")
	f.StringVar(&opts.AllowedTools, "allowed-tools", "", "the agent's allowed tools, e.g. \"Write,Read,Bash(git diff *)\"")
	f.StringVar(&now, "now", "", "RFC3339 instant to resolve reset times against (default: the current time)")
	f.StringVar(&opts.StderrPath, "stderr", "", "the agent's standard error, read for usage limits and errors")
	return cmd
}

func runAnalyze(_ context.Context, opts *analyzeOptions) error {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var in io.Reader = opts.IO.In
	name := "standard input"
	if opts.Path != "" && opts.Path != "-" {
		f, err := os.Open(opts.Path)
		if err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		defer f.Close()
		in, name = f, opts.Path
	}
	aopts := analyze.Options{ExitCode: opts.ExitCode, Now: now, AllowedTools: analyze.SplitToolList(opts.AllowedTools)}
	if opts.StderrPath != "" {
		b, err := os.ReadFile(opts.StderrPath)
		if err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		aopts.Stderr = b
	}
	a, err := analyzeOutput(in, aopts)
	if err != nil {
		return fmt.Errorf("analyze %s: %w", name, err)
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(a)
	}
	// The summary quotes the agent: no escape sequence or secret of its
	// reaches the terminal. (--json is the stable contract, escaped by JSON.)
	_, err = io.WriteString(opts.IO.Out, safeText(humanSummary(a)))
	return err
}

// sniffSize is how much of the output is looked at to tell its format.
const sniffSize = 64 << 10

// analyzeOutput reads one agent output. The analyzer does not know
// OpenCode's events (its adapter translates them on the fly), so an output
// whose first JSON line is one goes through the adapter's Normalize.
func analyzeOutput(r io.Reader, opts analyze.Options) (*analyze.Analysis, error) {
	br := bufio.NewReaderSize(r, sniffSize)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read: %w", err)
	}
	if opencodewire.Detect(head) {
		return opencode.Normalize(br, opts)
	}
	return analyze.Analyze(br, opts)
}

// humanSummary is the short reading of an analysis for a person.
func humanSummary(a *analyze.Analysis) string {
	var b strings.Builder
	line := func(k, format string, args ...any) {
		if k != "" {
			k += ":"
		}
		fmt.Fprintf(&b, "%-15s %s\n", k, fmt.Sprintf(format, args...))
	}
	block := "none (heuristics used)"
	if a.StatusBlock != nil {
		block = a.StatusBlock.Dialect
	}
	line("format", "%s", a.Format)
	line("status block", "%s", block)
	exit := "no"
	if a.ExitSignal {
		exit = "yes"
	}
	if !a.ExitSignalExplicit {
		exit += " (not stated)"
	}
	line("status", "%s", a.Status)
	line("exit signal", "%s", exit)
	line("work", "%s, files modified %s, tasks done %s, remaining %s", a.WorkType, num(a.FilesModified), num(a.TasksCompleted), num(a.TasksRemaining))
	tests := a.TestsStatus
	if a.IsTestOnly {
		tests += " (test-only iteration)"
	}
	line("tests", "%s", tests)
	completion := fmt.Sprintf("%d indicator(s)", a.CompletionIndicators)
	if a.HasCompletionSignal {
		completion += ", completion wording"
	}
	line("completion", "%s", completion)
	if a.AskingQuestions {
		line("questions", "%d asked", a.QuestionCount)
	}
	if a.ClarificationNeeded {
		line("clarification", "needed: %s", strings.Join(a.ClarificationQuestions, " / "))
	}
	if a.PRReady {
		line("pr ready", "yes")
	}
	if a.IsError {
		line("agent error", "yes")
	}
	for i, e := range a.Errors {
		if i == 5 {
			line("", "… %d more", len(a.Errors)-5)
			break
		}
		line(pick(i == 0, "errors", ""), "%s", e)
	}
	for i, d := range a.PermissionDenials {
		line(pick(i == 0, "denied", ""), "%s %s", d.Tool, d.Command)
	}
	if u := a.UsageLimit; u.Detected {
		reset := "unknown reset time"
		if u.ResetsAt != "" {
			reset = "resets " + u.ResetsAt
		}
		line("usage limit", "%s, %s — %s", u.Kind, reset, u.Message)
	}
	if a.SessionID != "" {
		line("session", "%s", a.SessionID)
	}
	u := a.Usage
	line("usage", "%d in, %d out, %d cache read, %d cache write, $%.4f", u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.CostUSD)
	if a.Summary != "" {
		line("summary", "%s", a.Summary)
	}
	if a.Recommendation != "" {
		line("recommendation", "%s", a.Recommendation)
	}
	for i, w := range a.Warnings {
		line(pick(i == 0, "warnings", ""), "%s", w)
	}
	return b.String()
}

func num(n int) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

func pick(first bool, a, b string) string {
	if first {
		return a
	}
	return b
}
