package opencode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"ralph/internal/agent"
	"ralph/internal/store"
)

// `opencode run` retries a 429 after the provider's retry-after, however
// long, and says nothing meanwhile: no event on stdout, and on stderr only
// its log (--print-logs), where the failed request is one line:
//
//	timestamp=… level=ERROR run=… message="stream error" providerID=anthropic … error.error="AI_APICallError: This request would exceed your account's rate limit. Please try again later."
//
// Neither the status nor the retry-after is in it. The watch reads that log
// and stops the call when a rate-limit error is not followed by a retry
// within the quiet window, or repeats limitStrikes times before a step gets
// through: a short wait OpenCode gets over by itself is left alone.
const (
	// DefaultLimitQuiet covers OpenCode's first retries of a 429 without
	// retry-after (2, 4, 8 s) and short provider waits.
	DefaultLimitQuiet = 10 * time.Second
	limitStrikes      = 3
)

// limitMarker starts the line ralph adds to the stderr log when it stopped
// the call, so the log says why and Normalize reads the limit from it.
const limitMarker = "ralph: stopped opencode at a provider rate limit: "

// rateLimited matches the provider messages of a 429, whose status the log
// does not carry: Anthropic's "would exceed your account's rate limit",
// OpenAI's "Rate limit reached" and "exceeded your current quota", Google's
// RESOURCE_EXHAUSTED. Overloaded (529) and server errors are not limits.
var rateLimited = regexp.MustCompile(`(?i)rate[ _-]?limit|usage limit|too many requests|\b429\b|quota|resource[ _]exhausted`)

// limitWatch follows one call's stderr log. Lines come from the runner's
// reader goroutine, the quiet timer fires on its own: mu orders them.
type limitWatch struct {
	quiet time.Duration
	abort chan string

	mu      sync.Mutex
	timer   *time.Timer
	strikes int    // rate-limit errors since a step last got through
	msg     string // the last one's message
	tripped bool
}

func newLimitWatch(quiet time.Duration) *limitWatch {
	if quiet <= 0 {
		quiet = DefaultLimitQuiet
	}
	return &limitWatch{quiet: quiet, abort: make(chan string, 1)}
}

// line reads one line of OpenCode's log.
func (w *limitWatch) line(b []byte) {
	s := string(b)
	if !strings.HasPrefix(s, "timestamp=") {
		return // not OpenCode's log
	}
	msg, ok := logValue(s, "message")
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tripped {
		return
	}
	switch msg {
	case "stream error":
		e := streamError(s)
		if !rateLimited.MatchString(e) {
			return
		}
		w.msg, w.strikes = e, w.strikes+1
		if w.strikes >= limitStrikes {
			w.trip()
			return
		}
		w.stopTimer()
		w.timer = time.AfterFunc(w.quiet, w.quietOver)
	case "stream":
		// A request goes out: OpenCode is retrying, not waiting.
		w.stopTimer()
	case "loop":
		// A new step: the last request got through.
		w.strikes = 0
	}
}

func (w *limitWatch) quietOver() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil && !w.tripped {
		w.trip()
	}
}

// trip asks the runner to stop the call; the channel holds the one reason
// ever sent, so this never blocks.
func (w *limitWatch) trip() {
	w.tripped = true
	w.stopTimer()
	w.abort <- "rate limit: " + w.msg
}

func (w *limitWatch) stopTimer() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// done ends the watch once the process is gone.
func (w *limitWatch) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopTimer()
	w.tripped = true // a late timer must not send
}

// streamError is the error of a "stream error" log line, without the
// SDK's class name.
func streamError(line string) string {
	for _, key := range []string{"error.error", "error.message", "error"} {
		if v, ok := logValue(line, key); ok && v != "" {
			if i := strings.Index(v, "Error: "); i >= 0 && !strings.Contains(v[:i], " ") {
				v = v[i+len("Error: "):]
			}
			return v
		}
	}
	return "rate limit"
}

// logValue reads key=value from a logfmt line; a quoted value has Go/JSON
// escapes.
func logValue(line, key string) (string, bool) {
	i := 0
	for {
		j := strings.Index(line[i:], key+"=")
		if j < 0 {
			return "", false
		}
		i += j
		if i == 0 || line[i-1] == ' ' {
			break
		}
		i += len(key)
	}
	v := line[i+len(key)+1:]
	if !strings.HasPrefix(v, `"`) {
		if k := strings.IndexByte(v, ' '); k >= 0 {
			v = v[:k]
		}
		return v, true
	}
	q, err := strconv.QuotedPrefix(v)
	if err != nil {
		return strings.Trim(v, `"`), true // cut short: what there is
	}
	u, err := strconv.Unquote(q)
	if err != nil {
		return q[1 : len(q)-1], true
	}
	return u, true
}

// watchedRunner runs a call with the watch on its stderr.
type watchedRunner struct {
	inner agent.ProcessRunner
	w     *limitWatch
}

func (r watchedRunner) Run(ctx context.Context, p agent.Process) (agent.ProcessResult, error) {
	p.OnStderrLine, p.Abort = r.w.line, r.w.abort
	res, err := r.inner.Run(ctx, p)
	r.w.done()
	if err != nil || res.Aborted == "" {
		return res, err
	}
	r.w.mu.Lock()
	msg := r.w.msg
	r.w.mu.Unlock()
	if werr := appendLine(p.StderrPath, limitMarker+strings.ReplaceAll(msg, "\n", " ")); werr != nil {
		// The analysis then misses the limit: say why.
		res.Warnings = append(res.Warnings, fmt.Sprintf("opencode: stopped at a rate limit, but could not note it in the log: %v", werr))
	}
	return res, nil
}

func appendLine(path, line string) error {
	// The log is made at the first byte: there may be none yet.
	f, err := store.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n" + line + "\n")
	return errors.Join(err, f.Close())
}
