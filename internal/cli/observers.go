package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"ralph/internal/loop"
)

// observers print, log and stream the engine's events; they never decide.
type observers struct {
	mu       sync.Mutex
	human    io.Writer
	log      io.Writer
	json     *json.Encoder
	verbose  bool
	live     bool          // show the agent's live output between the lines
	iterated bool          // an iteration ended in this run
	tty      bool          // human output is a terminal: waits show a live countdown
	stopTick chan struct{} // ends the running countdown
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// countdown rewrites one terminal line with the time left until the wait
// ends, once a second, until the next event.
func (o *observers) countdown(kind string, until time.Time) {
	stop := make(chan struct{})
	o.stopTick = stop
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			left := time.Until(until).Round(time.Second)
			if left < 0 {
				left = 0
			}
			o.mu.Lock()
			if o.stopTick == stop {
				fmt.Fprintf(o.human, "\r\033[K⏳ %s: %s left (until %s)", kind, left, until.Local().Format("15:04:05"))
			}
			o.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
}

// swapHuman replaces the human output (the dashboard owns the terminal
// while it is shown) and returns the previous one.
func (o *observers) swapHuman(w io.Writer) io.Writer {
	o.mu.Lock()
	defer o.mu.Unlock()
	old := o.human
	o.human = w
	o.tty = isTerminal(w)
	return old
}

func (o *observers) emit(ev loop.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopTick != nil {
		close(o.stopTick)
		o.stopTick = nil
		fmt.Fprint(o.human, "\r\033[K")
	}
	if ev.Type == loop.EventLive {
		if o.live && ev.Live != nil {
			// Agent text: masked and stripped of escapes like every line.
			_, _ = io.WriteString(o.human, safeText(ev.Live.String()))
		}
		return
	}
	if o.tty && ev.Type == loop.EventWait {
		defer o.countdown(ev.WaitKind, ev.Until)
	}
	if ev.Type == loop.EventIterationEnd {
		o.iterated = true
	}
	line := safeText(describe(ev))
	if ev.Type == loop.EventStop && !o.iterated {
		// This run made no call: "stopped after loop 1" beside "starting at
		// loop 2" would read as if it had.
		line = strings.Replace(line, fmt.Sprintf("stopped after loop %d:", ev.Loop), fmt.Sprintf("stopped before loop %d:", ev.Loop+1), 1)
	}
	if line != "" {
		fmt.Fprintf(o.log, "%s %s\n", ev.At.UTC().Format(time.RFC3339), line)
		if ev.Type != loop.EventIterationStart || o.verbose {
			fmt.Fprintf(o.human, "%s %s\n", ev.At.Local().Format("15:04:05"), line)
		}
	}
	if o.json != nil {
		_ = o.json.Encode(ev)
	}
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func describe(ev loop.Event) string {
	switch ev.Type {
	case loop.EventStart:
		return "ralph: " + ev.Message
	case loop.EventIterationStart:
		s := fmt.Sprintf("loop %d: calling the agent", ev.Loop)
		if ev.Session != "" {
			s += " (resuming session " + ev.Session + ")"
		}
		return s
	case loop.EventIterationEnd:
		m := ev.Iteration
		if m == nil {
			return ""
		}
		s := fmt.Sprintf("loop %d: %s in %s, exit %d, %s changed, %d tokens, $%.4f — %s",
			ev.Loop, strings.ToLower(m.Status), (time.Duration(m.DurationMS) * time.Millisecond).Round(time.Second),
			m.ExitCode, plural(m.FilesChanged, "file"), m.InputTokens+m.OutputTokens+m.CacheReadTokens+m.CacheCreationTokens, m.CostUSD, m.Decision)
		switch {
		case m.Summary != "":
			s += ": " + m.Summary
		case ev.Message != "":
			// No prose to summarise (a Codex or Gemini usage limit): the
			// decision's own reason says what happened.
			s += ": " + ev.Message
		}
		return s
	case loop.EventWait:
		s := fmt.Sprintf("waiting (%s) until %s", ev.WaitKind, ev.Until.Local().Format("15:04:05"))
		if ev.Until.IsZero() { // a person's answer: no end but theirs
			s = fmt.Sprintf("waiting (%s)", ev.WaitKind)
		}
		if ev.Message != "" {
			s += ": " + ev.Message
		}
		return s
	case loop.EventBackup:
		return "backup: " + ev.Message
	case loop.EventWarning:
		return "warning: " + ev.Message
	case loop.EventPaused, loop.EventResumed:
		return ev.Message
	case loop.EventAgentSwitch:
		return "agent: " + ev.Message
	case loop.EventVerify:
		v := ev.Verify
		if v == nil {
			return "verify: " + ev.Message
		}
		return fmt.Sprintf("verify: `%s` %s in %s — %s", v.Command, v.Outcome(),
			(time.Duration(v.DurationMS) * time.Millisecond).Round(10*time.Millisecond), ev.Message)
	case loop.EventError:
		return "error: " + ev.Message
	case loop.EventStop:
		if ev.Message == "" {
			ev.Message = string(ev.Reason)
		}
		return fmt.Sprintf("stopped after loop %d: %s (exit %d) — %s", ev.Loop, ev.Reason, ev.ExitCode, ev.Message)
	}
	return ""
}
