package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/shellwords"
)

// MaxArgLen is Linux's MAX_ARG_STRLEN (32 pages, with the NUL): a longer
// argv element makes exec fail with a bare E2BIG. Adapters check it up front
// to say which argument is too long.
const MaxArgLen = 128<<10 - 1

// MaxStderr is how much of the end of stderr the analysis reads: limit and
// error messages come last, debug noise and retry chatter before them can
// be large.
const MaxStderr = 256 << 10

// CheckArgs reports the first argument the kernel would refuse.
func CheckArgs(agent string, argv []string) error {
	for _, arg := range argv {
		if len(arg) > MaxArgLen {
			return fmt.Errorf("%s: an argument of %d bytes (%.40q…) exceeds the system limit of %d bytes per argument; shorten the prompt or context",
				agent, len(arg), arg, MaxArgLen)
		}
	}
	return nil
}

// OptionValue rejects a flag value the agent CLI's option parser would
// misread as another option, or that cannot travel as one argument.
func OptionValue(agent, flag, v string) error {
	if strings.HasPrefix(v, "-") || strings.ContainsAny(v, "\n\x00") {
		return fmt.Errorf("%s: invalid %s value %q", agent, flag, v)
	}
	return nil
}

// ReadTail returns at most the last max bytes of a file.
func ReadTail(path string, max int64) ([]byte, error) {
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

// Analyzer reads one agent output; analyze.Analyze is the one for formats
// the analyzer knows, an adapter brings its own for a format it does not.
type Analyzer func(r io.Reader, opts analyze.Options) (*analyze.Analysis, error)

// LiveParserFunc makes a Process.OnLine that turns an agent's output lines
// into live events; dir makes file targets relative.
type LiveParserFunc func(dir string, emit func(LiveEvent)) func(line []byte)

// NotRun is the Result of a call that never started: its Invocation was
// rejected before anything ran.
func NotRun(inv Invocation) Result {
	return Result{ExitCode: -1, StdoutPath: inv.StdoutPath, StderrPath: inv.StderrPath}
}

// Call is one agent process built from an Invocation, and how to read
// what it leaves: the part of Adapter.Run that is the same for every agent.
type Call struct {
	// Agent names the adapter in error messages.
	Agent string
	// Argv is the command line (Adapter.Command); the rest of the process
	// comes from Invocation.
	Argv       []string
	Invocation Invocation
	// Live parses output lines for Invocation.OnEvent in a live call; nil
	// for an agent that cannot stream.
	Live LiveParserFunc
	// Stdin, when set, is the process's standard input (else /dev/null).
	Stdin io.Reader
	// Runner runs the process; nil means a zero Runner.
	Runner ProcessRunner
	// Hint completes a StartError that has none, telling the user where the
	// command comes from.
	Hint string
	// Now anchors reset times in the analysis; nil means time.Now.
	Now func() time.Time
	// Options go to the analysis; ExitCode, Stderr and Now are filled in.
	Options analyze.Options
	// Analyze reads the stdout log; nil means analyze.Analyze.
	Analyze Analyzer
	// CallFiles is Process.CallFiles.
	CallFiles func(callDir string) (env []string, err error)
}

// Run runs the process and analyses its output, following the contract of
// Adapter.Run.
func (c Call) Run(ctx context.Context) (Result, error) {
	inv := c.Invocation
	p := Process{
		Argv: c.Argv, Dir: inv.Dir, Env: inv.Env, Share: inv.Share, Timeout: inv.Timeout, Stdin: c.Stdin,
		StdoutPath: inv.StdoutPath, StderrPath: inv.StderrPath, OnStart: inv.OnStart,
		Gate: inv.Gate, CallFiles: c.CallFiles,
	}
	if inv.Live && inv.OnEvent != nil && c.Live != nil {
		p.OnLine = c.Live(inv.Dir, inv.OnEvent)
	}
	res := NotRun(inv)
	runner := c.Runner
	if runner == nil {
		runner = &Runner{}
	}
	pr, err := runner.Run(ctx, p)
	res.ExitCode, res.TimedOut, res.Interrupted = pr.ExitCode, pr.TimedOut, pr.Interrupted
	res.Duration, res.StartErr, res.Warnings, res.OutputErr = pr.Duration, pr.StartErr, pr.Warnings, pr.OutputErr
	if err != nil {
		var se *StartError
		if errors.As(err, &se) && se.Hint == "" {
			se.Hint = c.Hint
		}
		return res, err
	}
	if pr.Interrupted && pr.ExitCode == -1 {
		return res, nil // cancelled before it started: no output to read
	}
	res.Analysis, err = c.analyze(pr.ExitCode)
	res.Warnings = append(res.Warnings, skippedLines(res.Analysis)...)
	return res, err
}

// skippedLines turns the analyzer's note about output lines too long to
// read into a warning the loop shows: such a line may have carried the
// call's tokens, cost or session id, which then go uncounted, and a run
// must not lose them silently.
func skippedLines(a *analyze.Analysis) []string {
	if a == nil {
		return nil
	}
	var out []string
	for _, w := range a.Warnings {
		if strings.Contains(w, "longer than") && strings.Contains(w, "skipped") {
			out = append(out, "output: "+w+"; tokens, cost or the session id on them were not counted")
		}
	}
	return out
}

// analyze streams the stdout log through the analyzer instead of loading
// it: a transcript can be hundreds of megabytes.
func (c Call) analyze(exitCode int) (*analyze.Analysis, error) {
	f, err := os.Open(c.Invocation.StdoutPath)
	if err != nil {
		return nil, fmt.Errorf("%s: read output: %w", c.Agent, err)
	}
	defer f.Close()
	opts := c.Options
	opts.ExitCode = exitCode
	// No stderr log: the agent printed nothing there (lazyLog).
	if opts.Stderr, err = ReadTail(c.Invocation.StderrPath, MaxStderr); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: read stderr: %w", c.Agent, err)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	opts.Now = now()
	fn := c.Analyze
	if fn == nil {
		fn = analyze.Analyze
	}
	an, err := fn(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: analyse output: %w", c.Agent, err)
	}
	return an, nil
}

// CommandWords splits a configured command string (--agent-cmd and the
// like) into argv words (shellwords.Split); a blank one means def.
func CommandWords(agent, command, def string) ([]string, error) {
	if strings.TrimSpace(command) == "" {
		return []string{def}, nil
	}
	words, err := shellwords.Split(command)
	if err != nil {
		return nil, fmt.Errorf("%s: command %q: %w", agent, command, err)
	}
	return words, nil
}

// OutputFormat picks the output format of an agent whose json output is
// one object at the end: json by default, but a live call needs events as
// they happen, so json becomes stream-json there.
func OutputFormat(agent string, inv Invocation) (string, error) {
	switch inv.OutputFormat {
	case "", FormatJSON:
		if inv.Live {
			return FormatStreamJSON, nil
		}
		return FormatJSON, nil
	case FormatStreamJSON, FormatText:
		return inv.OutputFormat, nil
	}
	return "", fmt.Errorf("%s: unknown output format %q (want json, stream-json or text)", agent, inv.OutputFormat)
}
