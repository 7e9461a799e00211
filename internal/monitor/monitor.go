// Package monitor is ralph's terminal dashboard: the loop, the running
// iteration's live activity, the circuit breaker, the limits, the plan, the
// recent iterations and the tail of ralph.log, with keys to pause, stop and
// reset the breaker.
//
// It works in two modes over one model. Attached (`ralph monitor`), it reads
// the state directory a loop in another process writes and follows the
// running iteration's stdout log. In process (`ralph run --monitor`), the
// engine's events and live output arrive through a [Feed] as well, so the
// view reacts at once instead of at the next poll.
//
// Everything it shows comes from files through [Loader], which stats them
// once a second and re-reads only those that changed: an idle dashboard
// costs a handful of stat calls and one redraw per second.
package monitor

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"ralph/internal/agent"
)

// Control carries the keys' requests to the loop. Requests take effect
// after the current iteration; the dashboard learns that they did from the
// state files, never from these calls. The calls run on the dashboard's
// command goroutines, so they may block briefly (a file write) and must be
// safe for concurrent use: two quick key presses can overlap.
type Control interface {
	Pause() error
	Resume() error
	Stop() error
	ResetBreaker() error
}

// LineParser turns the agent's raw stdout lines into live events, as the
// agent adapter does while it runs: dir is the project directory, emit
// receives the events, and the returned function is fed one line at a time
// (without its newline). A parser keeps state between lines, so a new one
// is made for every iteration log. Both run on the goroutine that loads
// snapshots, one line at a time.
type LineParser func(dir string, emit func(agent.LiveEvent)) func(line []byte)

// Options configure Run and NewModel.
type Options struct {
	Source Source
	// Control is nil for a read-only view: the keys p, s and r then only
	// say so.
	Control Control
	// Parser reads the iteration logs when attached; nil shows raw lines.
	Parser LineParser
	// Feed is the in-process engine's events and live output. When set,
	// live activity comes from it and iteration logs are not followed.
	Feed *Feed
	// Responder takes the person's answers to what the agent's call waits
	// on, which the Feed tells (Feed.Pending); nil: nothing is asked here.
	Responder Responder
	// Title names the project in the Loop panel, e.g. its directory name.
	Title string
	// NoColor forces plain output. Without it colour follows the output:
	// none when NO_COLOR is set or the output is not a terminal.
	NoColor bool
	// In and Out default to the process's terminal.
	In  io.Reader
	Out io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// ErrInterrupted is Run's answer when the view was closed with ctrl+c rather
// than q, so an in-process caller can treat it as "stop the loop too".
var ErrInterrupted = errors.New("monitor interrupted")

// Run shows the dashboard on the alternate screen until the user quits or
// ctx ends (then it returns nil).
func Run(ctx context.Context, opts Options) error {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.In == nil {
		opts.In = os.Stdin
	}
	m := NewModel(opts)
	done := make(chan struct{})
	defer close(done)
	m.done = done
	p := tea.NewProgram(m,
		tea.WithContext(ctx), tea.WithAltScreen(),
		tea.WithInput(opts.In), tea.WithOutput(opts.Out),
		// The dashboard changes at most a few times a second; a lower
		// frame rate keeps the renderer's own ticker cheap when idle.
		tea.WithFPS(framesPerSecond),
	)
	final, err := p.Run()
	switch {
	case ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled):
		return nil
	case errors.Is(err, tea.ErrInterrupted): // SIGINT from outside the terminal
		return ErrInterrupted
	case err != nil:
		return err
	}
	if fm, ok := final.(*Model); ok && fm.interrupted {
		return ErrInterrupted
	}
	return nil
}

const framesPerSecond = 15
