package analyze

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	claudewire "ralph/internal/agent/claude/wire"
	codexwire "ralph/internal/agent/codex/wire"
	geminiwire "ralph/internal/agent/gemini/wire"
	"ralph/internal/jsonscan"
)

const (
	// maxLine bounds the part of one line that is held; the rest of a longer
	// line is read and dropped (such lines are tool output in practice).
	maxLine = 16 << 20
	// maxDocument bounds a pretty-printed JSON document read whole.
	maxDocument = 64 << 20
)

// Analyze reads one agent output and describes it. The only error is a read
// error; malformed input is analysed as text.
func Analyze(r io.Reader, opts Options) (*Analysis, error) {
	c := newCollector(opts)
	cr := &countingReader{r: r}
	if err := c.read(bufio.NewReaderSize(cr, 64<<10)); err != nil {
		return nil, err
	}
	if len(opts.Stderr) > 0 {
		c.readStderr(opts.Stderr)
	}
	a := c.finish()
	a.OutputBytes = cr.n
	return a, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *collector) read(br *bufio.Reader) error {
	lr := &lineReader{r: br}
	first, trunc, err := lr.nextNonBlank()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	if t := bytes.TrimSpace(first); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		if !trunc && parses(t) {
			return c.readLines(lr, append([]byte(nil), first...))
		}
		// Perhaps a pretty-printed document: try it whole, within bounds.
		doc := append(append([]byte(nil), first...), '\n')
		rest, err := io.ReadAll(io.LimitReader(br, maxDocument))
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		doc = append(doc, rest...)
		if len(rest) < maxDocument && !trunc && parses(doc) {
			c.jsonValues++
			c.value(doc)
			return nil
		}
		lr = &lineReader{r: bufio.NewReaderSize(io.MultiReader(bytes.NewReader(doc), br), 64<<10)}
		first, trunc, err = lr.nextNonBlank()
		if err != nil && err != io.EOF {
			return err
		}
		if trunc {
			c.skippedLong++
			first = nil
		}
		if first != nil {
			c.textLine(first)
		}
		return c.readLines(lr, nil)
	}
	c.textLine(first)
	return c.readLines(lr, nil)
}

// parses reports whether b holds exactly one JSON object or array.
func parses(b []byte) bool {
	s := jsonscan.New(b)
	k := s.Peek()
	if k != jsonscan.Object && k != jsonscan.Array {
		return false
	}
	return s.Skip() == nil && s.AtEnd()
}

// readLines reads the rest of the input line by line. pending is a first
// line that parsed as JSON: alone it is a JSON document, followed by more
// lines it is the first event of a transcript.
func (c *collector) readLines(lr *lineReader, pending []byte) error {
	for {
		line, trunc, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if pending != nil {
			if len(bytes.TrimSpace(line)) == 0 {
				c.textLine(line) // blank lines matter only to text
				continue
			}
			c.jsonLine(pending, false)
			pending = nil
		}
		c.jsonLine(line, trunc)
	}
	if pending != nil {
		c.jsonValues++
		c.value(pending)
	}
	return nil
}

// jsonLine handles one line of a transcript: an event or a line of text.
func (c *collector) jsonLine(line []byte, trunc bool) {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		if trunc {
			// A line too long to hold is tool output in practice; it is
			// neither parsed nor read as the agent's words.
			c.skippedLong++
			return
		}
		if t[0] == '{' {
			if typ, ok := eventType(t); ok && len(typ) > 0 && c.event(typ, t) {
				c.jsonValues++
				c.typedEvents++
				return
			}
		}
	}
	c.textLine(line)
}

// value handles a whole JSON document: one object or an array of them.
func (c *collector) value(b []byte) {
	s := jsonscan.New(b)
	switch s.Peek() {
	case jsonscan.Object:
		if typ, ok := eventType(b); ok && c.event(typ, b) {
			c.streamOnly = c.streamOnly || streamOnly(typ)
		}
	case jsonscan.Array:
		_ = s.Array(func(int) error {
			raw, err := s.Raw()
			if err == nil && len(raw) > 0 && raw[0] == '{' {
				if typ, ok := eventType(raw); ok {
					c.event(typ, raw)
				}
			}
			return err
		})
	}
}

// event hands one JSON object to the wire scanner of the agent whose format
// has its type, which hands the facts back (facts.go); an object without a
// type is a whole output (untyped). It reports whether the object was
// well-formed: one that is not gives no facts.
func (c *collector) event(typ, b []byte) bool {
	c.inEvent, c.deltaEvent, c.resultEvent = true, false, false
	var ok bool
	switch {
	case len(typ) == 0:
		ok = c.untyped(b)
	case string(typ) == "result" && geminiwire.IsResult(b):
		// The one type two formats share whose events differ: Gemini
		// CLI's result is told from Claude Code's by its members.
		ok = c.gemini.Event(typ, b)
	case claudewire.Reads(typ):
		ok = c.claude.Event(typ, b)
	case codexwire.Reads(typ):
		// Codex and Gemini CLI write their "error" events alike: Codex's
		// scanner reads both.
		ok = c.codex.Event(typ, b)
	case geminiwire.Reads(typ):
		ok = c.gemini.Event(typ, b)
	default: // a type no supported format has: nothing to read in it
		ok = jsonscan.ValidObject(b)
	}
	if ok && c.resultEvent && len(typ) > 0 {
		// A result may carry the flat schema's self-reported fields too.
		var f flatObject
		if f.parse(b) {
			c.readFlat(&f)
		}
	}
	if ok && c.pendingDelta && !c.deltaEvent {
		c.flushDelta() // an event without facts ends a run of streamed text too
	}
	c.inEvent = false
	return ok
}

// typePrefix is how every agent's events begin: a type, first.
var typePrefix = []byte(`{"type":"`)

// eventType reads the type of a JSON object: its first "type" member, a
// string, or nil when it has none. ok is false when the type is no string;
// an object whose type comes first is checked no further here (its
// format's scanner reads it all), others are read through once.
func eventType(b []byte) (typ []byte, ok bool) {
	if bytes.HasPrefix(b, typePrefix) {
		// A type is a short word: looked at a byte at a time, as a call
		// of the vector search would cost more.
		rest := b[len(typePrefix):]
		for i, ch := range rest {
			if ch == '"' {
				return rest[:i], true
			}
			if ch == '\\' {
				break // escaped: decoded below
			}
		}
	}
	found := false
	s := jsonscan.New(b)
	err := s.Object(func(k []byte) error {
		if string(k) != "type" || found {
			return nil
		}
		found = true
		var err error
		typ, err = s.StringBytes()
		return err
	})
	return typ, err == nil && s.AtEnd()
}

// streamOnly says whether an event of this type occurs only inside a
// transcript, never as a whole output: each agent's wire package knows its
// own.
func streamOnly(typ []byte) bool {
	t := string(typ)
	return claudewire.Is(t) || codexwire.Is(t) || geminiwire.Is(t)
}

// textLine handles a line of plain text: the agent's own words.
func (c *collector) textLine(line []byte) {
	if len(bytes.TrimSpace(line)) > 0 {
		c.textLines++
	}
	l := string(bytes.TrimSuffix(line, []byte("\r")))
	c.plainText.write(l)
	c.plainText.write("\n")
	c.ownLine(l, true)
}

// readStderr reads the agent's standard error for limits and errors only.
// A CLI may end it with a JSON error object after warnings, retry notices and
// a stack trace (the Gemini CLI does): that object, when there is one, is
// the report.
func (c *collector) readStderr(b []byte) {
	if o, ok := trailingErrorObject(bytes.TrimSpace(b)); ok {
		c.untyped(o)
		return
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		s := string(l)
		if !c.errs.full() {
			if e, ok := errorLine(s); ok {
				c.errs.add(e)
			}
		}
		c.limitText(s)
		// A CLI that refuses its command line says so on stderr in words
		// no error pattern need know; keep the first lines for that.
		if t := strings.TrimSpace(s); t != "" && len(c.stderrLines) < maxStderrLines {
			c.stderrLines = append(c.stderrLines, firstLineOf(t))
		}
	}
}

// maxStderrLines bounds the stderr lines kept for setup failures.
const maxStderrLines = 20

// lineReader yields lines without their newline, holding at most maxLine
// bytes of any one line.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	eof bool
}

func (lr *lineReader) next() (line []byte, truncated bool, err error) {
	if lr.eof {
		return nil, false, io.EOF
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if err == nil && len(lr.buf) == 0 {
			return trimEOL(chunk), false, nil // the common case: no copy
		}
		if room := maxLine - len(lr.buf); room > 0 {
			if len(chunk) > room {
				chunk, truncated = chunk[:room], true
			}
			lr.buf = append(lr.buf, chunk...)
		} else {
			truncated = true
		}
		switch {
		case err == nil:
			return trimEOL(lr.buf), truncated, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			lr.eof = true
			if len(lr.buf) == 0 && !truncated {
				return nil, false, io.EOF
			}
			return trimEOL(lr.buf), truncated, nil
		default:
			return nil, false, err
		}
	}
}

func (lr *lineReader) nextNonBlank() ([]byte, bool, error) {
	for {
		l, trunc, err := lr.next()
		if err != nil {
			return nil, false, err
		}
		if len(bytes.TrimSpace(bytes.TrimPrefix(l, []byte("\xef\xbb\xbf")))) > 0 || trunc {
			return bytes.TrimPrefix(l, []byte("\xef\xbb\xbf")), trunc, nil
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// maxStderrObjects bounds how many "{" line starts trailingErrorObject tries,
// from the end: the report is the last object, and a stack trace may print
// many braces.
const maxStderrObjects = 8

// trailingErrorObject finds a JSON object with an error that starts at the
// beginning of a line and runs to the end of t.
func trailingErrorObject(t []byte) ([]byte, bool) {
	end := len(t)
	for range maxStderrObjects {
		i := bytes.LastIndex(t[:end], []byte("\n{"))
		start := i + 1
		if i < 0 {
			if len(t) == 0 || t[0] != '{' {
				return nil, false
			}
			start = 0
		}
		if o := t[start:]; isErrorObject(o) {
			return o, true
		}
		if start == 0 {
			return nil, false
		}
		end = i
	}
	return nil, false
}

// isErrorObject reports whether b is one object with an "error" member
// that is not a string (an error object, or null).
func isErrorObject(b []byte) bool {
	found := false
	s := jsonscan.New(b)
	err := s.Object(func(k []byte) error {
		if string(k) == "error" && s.Peek() != jsonscan.String {
			found = true
		}
		return s.Skip() // Peek moved past blanks: Object would no longer skip the value
	})
	return err == nil && s.AtEnd() && found
}
