package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"ralph/internal/redact"
)

// maxMetricsLine bounds one metrics record when reading; a longer line is
// garbage (records are a few hundred bytes) and is skipped without holding
// it in memory.
const maxMetricsLine = 1 << 20

// AppendMetrics appends record as one JSON line to the file at path,
// creating it and its directory if needed. The line goes out in a single
// write on a file opened with O_APPEND, so concurrent appenders never
// interleave and a reader never sees half a line except after a crash
// mid-write, which ReadMetrics reports as a torn last line.
func AppendMetrics(path string, record any) error {
	data, err := json.Marshal(record) // compact: never contains a raw newline
	if err != nil {
		return fmt.Errorf("append metrics: %w", err)
	}
	data = redact.Encoded(append(data, '\n'))
	f, err := OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("append metrics: %w", err)
	}
	// A crash mid-append leaves a torn last line without its newline;
	// appending straight after it would glue this record to it and lose
	// both. Ending the torn line first keeps the loss to the torn record.
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("append metrics: %w", err)
	}
	return f.Close()
}

// BadLine is a metrics line ReadMetrics skipped.
type BadLine struct {
	Line int   // 1-based
	Torn bool  // the last line, cut short by a crash or a write in progress
	Err  error // why it was skipped
}

func (b BadLine) String() string {
	if b.Torn {
		return fmt.Sprintf("line %d: torn last line skipped: %v", b.Line, b.Err)
	}
	return fmt.Sprintf("line %d: skipped: %v", b.Line, b.Err)
}

// ReadMetrics streams the records of a metrics file to fn, one JSON object
// per line, with its 1-based line number; rec is only valid during the call.
// Blank lines are ignored. Lines that are not a JSON object are skipped and
// returned as BadLines, the last one marked Torn when it lacks its newline:
// one bad line must not hide the rest of the history. A last line without a
// newline that is nevertheless a whole object is delivered. An error from fn
// stops the reading and is returned; a missing file gives an error matching
// fs.ErrNotExist.
func ReadMetrics(path string, fn func(line int, rec json.RawMessage) error) ([]BadLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var bad []BadLine
	for n := 1; ; n++ {
		line, complete, tooLong, err := readLine(r)
		if err != nil {
			return bad, fmt.Errorf("read %s: %w", path, err)
		}
		if line == nil && complete && !tooLong { // end of file
			return bad, nil
		}
		line = bytes.TrimRight(line, "\r")
		switch {
		case tooLong:
			bad = append(bad, BadLine{Line: n, Torn: !complete, Err: fmt.Errorf("longer than %d bytes", maxMetricsLine)})
		case len(bytes.TrimSpace(line)) == 0:
		case !isObject(line):
			bad = append(bad, BadLine{Line: n, Torn: !complete, Err: errors.New("not a JSON object")})
		default:
			if err := fn(n, line); err != nil {
				return bad, err
			}
		}
		if !complete {
			return bad, nil
		}
	}
}

// readLine returns the next line without its newline. complete is false for
// a last line without a newline. At end of file it returns (nil, true,
// false, nil). A line over maxMetricsLine is drained, not kept, and
// reported tooLong.
func readLine(r *bufio.Reader) (line []byte, complete, tooLong bool, err error) {
	buf := []byte{}
	for {
		chunk, err := r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
			return nil, false, false, err
		}
		complete = err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		if !tooLong {
			buf = append(buf, chunk...)
			if len(buf) > maxMetricsLine {
				buf, tooLong = []byte{}, true
			}
		}
		switch {
		case complete:
			return buf, true, tooLong, nil
		case errors.Is(err, io.EOF):
			if len(buf) == 0 && !tooLong {
				return nil, true, false, nil
			}
			return buf, false, tooLong, nil
		}
	}
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
