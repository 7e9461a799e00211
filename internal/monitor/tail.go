package monitor

import (
	"bytes"
	"io"
	"os"
	"strings"

	"ralph/internal/agent"
)

// tailLines returns the last n lines of the file at path, oldest first,
// reading backwards from its end and never more than maxBytes: the log and
// the metrics grow for as long as a project lives. A last line without its
// newline (a write in progress) is included.
func tailLines(path string, n int, maxBytes int64) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const chunk = 32 << 10
	size := fi.Size()
	off := size
	var buf []byte
	newlines := 0
	for off > 0 && size-off < maxBytes && newlines <= n {
		step := min(int64(chunk), off, maxBytes-(size-off))
		off -= step
		b := make([]byte, step, step+int64(len(buf)))
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return nil, err
		}
		newlines += bytes.Count(b, []byte{'\n'})
		buf = append(b, buf...)
	}
	buf = bytes.TrimSuffix(buf, []byte{'\n'})
	if len(buf) == 0 {
		return nil, nil
	}
	lines := strings.Split(string(buf), "\n")
	if off > 0 {
		lines = lines[1:] // cut mid-line
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines, nil
}

// Bounds of following an iteration log. Attaching mid-iteration starts this
// far from the end; a poll that finds more than maxFollowRead new bytes
// skips to the newest; one stream-json line can carry a whole file.
const (
	followWindow  = 256 << 10
	maxFollowRead = 1 << 20
	maxFollowLine = 4 << 20
)

// follower turns the running iteration's stdout log into live events, for
// a dashboard attached to a loop in another process.
type follower struct {
	parser LineParser
	dir    string // project directory, for the parser

	path    string
	off     int64
	partial []byte
	skip    bool // inside a line longer than maxFollowLine
	feed    func([]byte)
	out     []agent.LiveEvent
}

func newFollower(parser LineParser, dir string) *follower {
	return &follower{parser: parser, dir: dir}
}

// poll reads what was appended to path since the last poll. reset reports a
// new log: the events then start afresh. An empty path ends following after
// one last read of the previous log, so the end of an iteration is shown.
func (f *follower) poll(path string) (events []agent.LiveEvent, reset bool) {
	f.out = nil
	switch {
	case path == f.path:
	case path == "":
		f.read()
		f.path = ""
		return f.take(), false
	default:
		f.start(path)
		reset = true
	}
	if f.path != "" {
		f.read()
	}
	return f.take(), reset
}

func (f *follower) take() []agent.LiveEvent {
	out := f.out
	f.out = nil
	return out
}

func (f *follower) start(path string) {
	f.path, f.off, f.partial, f.skip = path, 0, nil, false
	emit := func(ev agent.LiveEvent) { f.out = append(f.out, ev) }
	if f.parser != nil {
		f.feed = f.parser(f.dir, emit)
	} else {
		f.feed = func(line []byte) {
			if s := strings.TrimSpace(string(line)); s != "" {
				emit(agent.LiveEvent{Kind: agent.LiveOutput, Text: s})
			}
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > followWindow {
		f.off = fi.Size() - followWindow
		f.skip = true // the window starts mid-line
	}
}

func (f *follower) read() {
	if f.path == "" {
		return
	}
	file, err := os.Open(f.path)
	if err != nil {
		return // not created yet, or pruned: try again at the next poll
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return
	}
	size := fi.Size()
	if size < f.off { // replaced or truncated
		f.off, f.partial, f.skip = 0, nil, false
	}
	if size-f.off > maxFollowRead {
		f.off, f.partial, f.skip = size-maxFollowRead, nil, true
	}
	if size == f.off {
		return
	}
	buf := make([]byte, size-f.off)
	n, err := file.ReadAt(buf, f.off)
	if err != nil && err != io.EOF {
		return
	}
	f.off += int64(n)
	f.split(buf[:n])
}

func (f *follower) split(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !f.skip {
				f.partial = append(f.partial, b...)
				if len(f.partial) > maxFollowLine {
					f.partial, f.skip = nil, true
				}
			}
			return
		}
		if !f.skip {
			line := append(f.partial, b[:i]...)
			f.feed(bytes.TrimRight(line, "\r"))
		}
		f.partial, f.skip = nil, false
		b = b[i+1:]
	}
}
