package cli

// The raw log's mechanics: its last lines, read from the end, and
// following it as it grows.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// tailLog is the last n lines of the log whose live file f holds size
// bytes, taken from the rotated files (path.1, path.2, ...) as well when
// the live one was just started.
func tailLog(f *os.File, size int64, path string, n int) ([]byte, error) {
	out, got, err := tail(f, size, n)
	for i := 1; err == nil && got < n; i++ {
		old, oldSize, oerr := openSized(fmt.Sprintf("%s.%d", path, i))
		if oerr != nil {
			break
		}
		var more []byte
		var k int
		more, k, err = tail(old, oldSize, n-got)
		_ = old.Close()
		if len(more) > 0 && more[len(more)-1] != '\n' {
			more = append(more, '\n')
		}
		out, got = append(more, out...), got+k
	}
	return out, err
}

// tail returns the last n lines of the first size bytes of r and how many
// lines that is, reading backwards so that a long log costs only what is
// shown.
func tail(r io.ReaderAt, size int64, n int) ([]byte, int, error) {
	if n <= 0 || size <= 0 {
		return nil, 0, nil
	}
	const block = 32 << 10
	var buf []byte
	for pos := size; ; {
		start := max(0, pos-block)
		chunk := make([]byte, pos-start)
		if _, err := r.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		buf, pos = append(chunk, buf...), start
		// The file's own last newline ends its last line; it starts none.
		body := bytes.TrimSuffix(buf, []byte("\n"))
		if i, found := nthLastNewline(body, n); found {
			return buf[i+1:], n, nil
		}
		if pos == 0 {
			return buf, bytes.Count(body, []byte("\n")) + 1, nil
		}
	}
}

func nthLastNewline(b []byte, n int) (int, bool) {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return i, true
			}
		}
	}
	return 0, false
}

// follow copies to out what is appended to the file at path from offset
// on, until ctx ends, as tail -F does: when the file is replaced (a
// rotation) the rest of the old one is copied and the new one is read from
// its start; when it shrinks (a truncation) it is read again from the
// start; while it is missing, follow waits for it. f is the file already
// open at offset, or nil; follow closes it.
func follow(ctx context.Context, path string, f *os.File, offset int64, poll time.Duration, out func([]byte) error) error {
	defer func() {
		if f != nil {
			_ = f.Close()
		}
	}()
	buf := make([]byte, 64<<10)
	copyNew := func() error {
		for {
			n, err := f.ReadAt(buf, offset)
			offset += int64(n)
			if n > 0 {
				if werr := out(buf[:n]); werr != nil {
					return werr
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if f == nil {
			nf, err := os.Open(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			f = nf
		}
		if f != nil {
			if err := copyNew(); err != nil {
				return err
			}
			cur, err := f.Stat()
			if err != nil {
				return err
			}
			now, serr := os.Stat(path)
			switch {
			case serr != nil && !errors.Is(serr, fs.ErrNotExist):
				return serr
			case serr != nil || !os.SameFile(cur, now):
				// Lines written just before the switch are in the old file.
				if err := copyNew(); err != nil {
					return err
				}
				_ = f.Close()
				f, offset = nil, 0
				if serr == nil {
					continue // the new file is there: read it at once
				}
			case cur.Size() < offset:
				offset = 0
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
