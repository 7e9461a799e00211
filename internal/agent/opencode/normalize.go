package opencode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"ralph/internal/agent/opencode/wire"
	"ralph/internal/analyze"
)

// maxLine bounds the part of one line that is held; a longer line is a
// tool's output (a whole file read) in practice and is skipped.
const maxLine = 16 << 20

// maxFailedOutput is how much of a failed command's output the analysis
// gets to look for the error the agent is stuck on.
const maxFailedOutput = 16 << 10

// Normalize reads the output of `opencode run --format json` and describes
// it. The analyzer does not know OpenCode's events, so they are translated
// on the fly into the Gemini CLI stream-json events it does know, which
// carry the same facts: a session id, the agent's messages (each text part
// one message, so status blocks, questions and the summary come from its
// own words), tool calls with their command or file, failed tool output,
// errors and a final result. What that dialect cannot say is filled in
// afterwards: cache writes and cost, refused tools, and a 429's reset time
// from the provider's retry-after header. Lines that are not JSON (the
// default text format) pass through as text. Memory stays bounded: the
// translation streams through a pipe and tool output is dropped.
//
// Stderr is read without OpenCode's log; a rate limit ralph stopped the
// call at (noted in the log, see limitMarker) is a usage limit.
func Normalize(r io.Reader, opts analyze.Options) (*analyze.Analysis, error) {
	pr, pw := io.Pipe()
	t := &translator{out: bufio.NewWriter(pw)}
	opts.Stderr, t.stopped = splitStderr(opts.Stderr)
	done := make(chan error, 1)
	go func() {
		err := t.run(r)
		pw.CloseWithError(err) // nil: the analyzer sees EOF
		done <- err
	}()
	an, err := analyze.Analyze(pr, opts)
	pr.CloseWithError(errors.New("analysis finished")) // stops the translator if the analyzer gave up early
	terr := <-done
	if err != nil {
		return nil, err
	}
	if terr != nil {
		return nil, terr
	}
	t.complete(an, opts.Now)
	return an, nil
}

// translator turns OpenCode events into analyzer events, remembering what
// only OpenCode says.
type translator struct {
	out *bufio.Writer
	n   int64 // bytes of OpenCode output read

	sessionID string
	events    bool // an OpenCode event was seen: the run gets a result
	steps     bool // usage was reported
	usage     analyze.Usage
	denials   []analyze.Denial
	lastErr   string
	limit     *wire.APIError // the last 429
	stopped   string         // the rate limit ralph stopped the call at
}

func (t *translator) run(r io.Reader) error {
	br := bufio.NewReaderSize(&countingReader{r: r, n: &t.n}, 64<<10)
	for {
		line, long, err := readLine(br)
		if len(line) > 0 && !long {
			if werr := t.line(line); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
	}
	if t.events {
		t.result()
	}
	return t.out.Flush()
}

// readLine returns the next line with its end; long reports a line longer
// than maxLine, which is read to its end but not held.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > maxLine {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, long, err
		}
	}
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func (t *translator) line(raw []byte) error {
	ev, ok := wire.ParseEvent(raw)
	if !ok {
		_, err := t.out.Write(raw) // the agent's text, or a line cut short
		if !bytes.HasSuffix(raw, []byte("\n")) {
			err = errors.Join(err, t.out.WriteByte('\n'))
		}
		return err
	}
	t.events = true
	if ev.SessionID != "" && t.sessionID == "" {
		t.sessionID = ev.SessionID
		t.emit(map[string]any{"type": "init", "session_id": ev.SessionID})
	}
	p := ev.Part
	switch ev.Type {
	case "text":
		// A text part is whole: a message without "delta", which the
		// analyzer reads as one text block.
		t.emit(map[string]any{"type": "message", "role": "assistant", "content": p.Text})
	case "tool_use":
		t.tool(p)
	case "step_finish":
		t.steps = true
		t.usage.InputTokens += p.Tokens.Input
		t.usage.OutputTokens += p.Tokens.Output + p.Tokens.Reasoning
		t.usage.CacheReadInputTokens += p.Tokens.Cache.Read
		t.usage.CacheCreationInputTokens += p.Tokens.Cache.Write
		t.usage.CostUSD += p.Cost
	case "error":
		e := ev.APIError()
		t.lastErr = e.Message()
		if e.Data.StatusCode == http.StatusTooManyRequests {
			t.limit = &e
		}
		t.emit(map[string]any{"type": "error", "message": t.lastErr})
	}
	return nil
}

// tool reports one finished tool call, and how it failed if it did.
func (t *translator) tool(p wire.Part) {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"filePath"`
	}
	_ = json.Unmarshal(p.State.Input, &in)
	if p.Rejected() {
		// Never ran: no tool call, so a refused edit is no file changed.
		target := in.Command
		if target == "" {
			target = in.FilePath
		}
		t.deny(analyze.Denial{Tool: p.Tool, Command: target})
		return
	}
	t.emit(map[string]any{"type": "tool_use", "tool_name": p.Tool,
		"parameters": map[string]string{"command": in.Command, "file_path": in.FilePath}})
	switch {
	case p.State.Status == "error":
		t.emit(map[string]any{"type": "tool_result", "status": "error", "error": map[string]string{"message": p.State.Error}})
	case p.State.Metadata.Exit != nil && *p.State.Metadata.Exit != 0:
		// A command that failed (a test run, a build) completes as a tool;
		// its head may hold the error the agent is stuck on.
		out := p.State.OutputText()
		if len(out) > maxFailedOutput {
			out = out[:maxFailedOutput]
		}
		t.emit(map[string]any{"type": "tool_result", "status": "error", "output": out})
	}
}

func (t *translator) deny(d analyze.Denial) {
	for _, have := range t.denials {
		if have == d {
			return
		}
	}
	if len(t.denials) < 100 {
		t.denials = append(t.denials, d)
	}
}

// result ends the run as the Gemini stream does; its stats hold the tokens
// the dialect can carry, complete fills in the rest.
func (t *translator) result() {
	res := map[string]any{"type": "result", "status": "success", "stats": map[string]int64{
		"input_tokens": t.usage.InputTokens, "output_tokens": t.usage.OutputTokens, "cached": t.usage.CacheReadInputTokens,
	}}
	if t.lastErr != "" {
		res["status"], res["error"] = "error", map[string]string{"message": t.lastErr}
	}
	t.emit(res)
}

func (t *translator) emit(v any) {
	b, _ := json.Marshal(v) // maps of strings and numbers always marshal
	t.out.Write(append(b, '\n'))
}

// complete fills in what OpenCode said beyond the translated events.
func (t *translator) complete(an *analyze.Analysis, now time.Time) {
	an.OutputBytes = t.n
	if t.steps {
		an.Usage = t.usage
	}
	if len(t.denials) > 0 {
		an.PermissionDenials = append(an.PermissionDenials, t.denials...)
	}
	if an.UsageLimit.Detected {
		return
	}
	if t.limit == nil {
		if t.stopped != "" {
			var reset bool
			if an.UsageLimit, reset = stoppedLimit(t.stopped, now); !reset {
				an.Warnings = append(an.Warnings, "usage limit without a reset time")
			}
		}
		return
	}
	// OpenCode retried the 429 before it gave up, so it is no passing
	// hiccup: the provider's limit is reached.
	an.UsageLimit = analyze.UsageLimit{Detected: true, Kind: analyze.LimitUnknown, Message: t.limit.Message()}
	if at, ok := retryAfter(t.limit.Data.ResponseHeaders, now); ok {
		an.UsageLimit.ResetsAt = at.UTC().Format(time.RFC3339)
	} else {
		an.Warnings = append(an.Warnings, "usage limit without a reset time")
	}
}

// retryAfter reads the reset time from a 429's headers: retry-after-ms,
// or retry-after in seconds or as an HTTP date.
func retryAfter(h map[string]string, now time.Time) (time.Time, bool) {
	get := func(name string) string {
		for k, v := range h {
			if strings.EqualFold(k, name) {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if ms, err := strconv.ParseFloat(get("retry-after-ms"), 64); err == nil && ms > 0 && !now.IsZero() {
		return now.Add(time.Duration(ms * float64(time.Millisecond))).Truncate(time.Second), true
	}
	v := get("retry-after")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 && !now.IsZero() {
		return now.Add(time.Duration(s * float64(time.Second))).Truncate(time.Second), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return at, true
	}
	return time.Time{}, false
}
