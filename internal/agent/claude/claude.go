// Package claude is the Claude Code adapter: it builds the `claude -p`
// command line, runs it through the agent Runner, renders stream-json live,
// and analyses the output.
package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/analyze"
)

// Name is the adapter's name.
const Name = "claude"

// DefaultCommand is the executable when no --agent-cmd / CLAUDE_CODE_CMD is
// set.
const DefaultCommand = "claude"

// maxArgLen is Linux's MAX_ARG_STRLEN (32 pages, with the NUL): a longer
// argv element makes exec fail with a bare E2BIG. Checked up front to say
// which argument is too long.
const maxArgLen = 128<<10 - 1

// maxStderr is how much of the end of stderr the analysis reads: limit and
// error messages come last, debug noise before them can be large.
const maxStderr = 256 << 10

// Adapter runs Claude Code. Build it with New; the fields may be replaced
// before the first Run.
type Adapter struct {
	// Cmd are the words of the executable, e.g. ["npx",
	// "@anthropic-ai/claude-code"].
	Cmd []string
	// Runner runs the process; New sets an *agent.Runner.
	Runner agent.ProcessRunner
	// Now anchors reset times in the analysis ("resets 9pm").
	Now func() time.Time
}

var _ agent.Adapter = (*Adapter)(nil)

// New returns an adapter for a command string as given in --agent-cmd or
// CLAUDE_CODE_CMD, split into words like a shell would (agent.SplitWords);
// "" means DefaultCommand.
func New(command string) (*Adapter, error) {
	words, err := agent.SplitWords(command)
	if err != nil {
		return nil, fmt.Errorf("claude command %q: %w", command, err)
	}
	if len(words) == 0 {
		words = []string{DefaultCommand}
	}
	return &Adapter{Cmd: words, Runner: &agent.Runner{}, Now: time.Now}, nil
}

// Name implements agent.Adapter.
func (a *Adapter) Name() string { return Name }

// Capabilities implements agent.Adapter: Claude Code reports all of it.
func (a *Adapter) Capabilities() agent.Capabilities {
	return agent.Capabilities{
		StructuredOutput: true, TokenUsage: true, PermissionDenials: true, UsageLimits: true,
		SessionResume: true, ToolRestrictions: true, Streaming: true,
	}
}

// Command implements agent.Adapter. The argv is
//
//	<cmd words> [--model M] [--effort E] --output-format F [--verbose]
//	[--allowedTools T1 T2 ...] [--resume ID] [--append-system-prompt CTX] -p -- PROMPT
//
// --verbose comes with stream-json because `claude -p` refuses stream-json
// without it. Each allowed tool is its own argv element after one
// --allowedTools: the flag is variadic (`<tools...>`), and an element keeps
// its spaces, so "Bash(git diff *)" needs no quoting; the flags after it end
// the list. "--" before the prompt keeps a prompt that starts with "-" (a
// checklist) from being read as an option. Never --continue: a session is
// only ever resumed by its id.
func (a *Adapter) Command(inv agent.Invocation) ([]string, error) {
	if len(a.Cmd) == 0 || a.Cmd[0] == "" {
		return nil, errors.New("claude: no command")
	}
	if strings.TrimSpace(inv.Prompt) == "" {
		return nil, errors.New("claude: empty prompt")
	}
	format, err := outputFormat(inv)
	if err != nil {
		return nil, err
	}
	argv := slices.Clone(a.Cmd)
	for _, f := range []struct{ flag, value string }{{"--model", inv.Model}, {"--effort", inv.Effort}} {
		if f.value == "" {
			continue
		}
		if err := optionValue(f.flag, f.value); err != nil {
			return nil, err
		}
		argv = append(argv, f.flag, f.value)
	}
	argv = append(argv, "--output-format", format)
	if format == agent.FormatStreamJSON {
		argv = append(argv, "--verbose")
	}
	tools, err := toolList(inv.AllowedTools)
	if err != nil {
		return nil, err
	}
	if len(tools) > 0 {
		argv = append(argv, "--allowedTools")
		argv = append(argv, tools...)
	}
	if inv.SessionID != "" {
		if err := optionValue("--resume", inv.SessionID); err != nil {
			return nil, err
		}
		argv = append(argv, "--resume", inv.SessionID)
	}
	if inv.AppendSystemPrompt != "" {
		argv = append(argv, "--append-system-prompt", inv.AppendSystemPrompt)
	}
	argv = append(argv, "-p", "--", inv.Prompt)
	for _, arg := range argv {
		if len(arg) > maxArgLen {
			return nil, fmt.Errorf("claude: an argument of %d bytes (%.40q…) exceeds the system limit of %d bytes per argument; shorten the prompt or context",
				len(arg), arg, maxArgLen)
		}
	}
	return argv, nil
}

// outputFormat picks --output-format: json by default; a live run needs
// events as they happen, so json becomes stream-json there.
func outputFormat(inv agent.Invocation) (string, error) {
	switch inv.OutputFormat {
	case "", agent.FormatJSON:
		if inv.Live {
			return agent.FormatStreamJSON, nil
		}
		return agent.FormatJSON, nil
	case agent.FormatStreamJSON, agent.FormatText:
		return inv.OutputFormat, nil
	}
	return "", fmt.Errorf("claude: unknown output format %q (want json, stream-json or text)", inv.OutputFormat)
}

// optionValue rejects values the CLI's option parser would misread.
func optionValue(flag, v string) error {
	if strings.HasPrefix(v, "-") || strings.ContainsAny(v, "\n\x00") {
		return fmt.Errorf("claude: invalid %s value %q", flag, v)
	}
	return nil
}

// toolList flattens the allow-list to one tool per element: entries may
// hold several tools ("Write,Read" from .ralphrc), and the analyzer wants
// them apart too.
func toolList(in []string) ([]string, error) {
	var out []string
	for _, e := range in {
		for _, t := range analyze.SplitToolList(e) {
			if strings.HasPrefix(t, "-") || strings.ContainsRune(t, '\x00') {
				return nil, fmt.Errorf("claude: invalid allowed tool %q", t)
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// Run implements agent.Adapter.
func (a *Adapter) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	res := agent.Result{ExitCode: -1, StdoutPath: inv.StdoutPath, StderrPath: inv.StderrPath}
	argv, err := a.Command(inv)
	if err != nil {
		return res, err
	}
	p := agent.Process{
		Argv: argv, Dir: inv.Dir, Env: inv.Env, Timeout: inv.Timeout,
		StdoutPath: inv.StdoutPath, StderrPath: inv.StderrPath,
	}
	if inv.Live && inv.OnEvent != nil {
		p.OnLine = newLiveParser(inv.Dir, inv.OnEvent).line
	}
	runner := a.Runner
	if runner == nil {
		runner = &agent.Runner{}
	}
	pr, err := runner.Run(ctx, p)
	res.ExitCode, res.TimedOut, res.Interrupted = pr.ExitCode, pr.TimedOut, pr.Interrupted
	res.Duration, res.StartErr, res.Warnings = pr.Duration, pr.StartErr, pr.Warnings
	if err != nil {
		var se *agent.StartError
		if errors.As(err, &se) && se.Hint == "" {
			se.Hint = "set --agent-cmd or CLAUDE_CODE_CMD to the Claude Code executable, or install it: npm install -g @anthropic-ai/claude-code"
		}
		return res, err
	}
	if pr.Interrupted && pr.ExitCode == -1 {
		return res, nil // cancelled before it started: no output to read
	}
	tools, _ := toolList(inv.AllowedTools) // validated by Command
	res.Analysis, err = a.analyze(inv, pr.ExitCode, tools)
	return res, err
}

// analyze streams the stdout log through the analyzer instead of loading
// it: a transcript can be hundreds of megabytes.
func (a *Adapter) analyze(inv agent.Invocation, exitCode int, tools []string) (*analyze.Analysis, error) {
	f, err := os.Open(inv.StdoutPath)
	if err != nil {
		return nil, fmt.Errorf("claude: read output: %w", err)
	}
	defer f.Close()
	stderr, err := readTail(inv.StderrPath, maxStderr)
	if err != nil {
		return nil, fmt.Errorf("claude: read stderr: %w", err)
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	an, err := analyze.Analyze(f, analyze.Options{ExitCode: exitCode, AllowedTools: tools, Now: now(), Stderr: stderr})
	if err != nil {
		return nil, fmt.Errorf("claude: analyse output: %w", err)
	}
	return an, nil
}

// readTail returns at most the last max bytes of a file.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		if _, err := f.Seek(st.Size()-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}
