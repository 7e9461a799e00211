package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"ralph/internal/ratelimit"
	"ralph/internal/redact"
)

// viewMemo remembers, per view file, the bytes this process last wrote and
// how the file looked just after, so that a view whose content has not
// changed is not written again: a rewrite creates a temporary file and
// renames it over the view, and on ext4 a new inode costs more CPU than
// the rest of a save. The circuit breaker's view changes only when the
// breaker does, not at every iteration.
type viewMemo struct {
	mu      sync.Mutex
	written map[string]viewWritten
	// appended is the metrics line this store appended last, with the
	// file as it left it: while the file is still so, its last record is
	// known without reading it back.
	appended map[string]appendedLine
}

type appendedLine struct {
	id   recordID
	file os.FileInfo
}

type viewWritten struct {
	data []byte
	size int64
	mod  time.Time
}

// writeView writes v to the view at path as WriteViewJSON does, unless
// this store wrote the same bytes there last and the file is still the
// one it wrote (same size and modification time): a view removed or
// edited since is written again.
func (s *Store) writeView(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return s.writeViewBytes(path, redact.Encoded(append(data, '\n')))
}

// writeCallsView writes the rate limit's view. It holds only times and
// numbers, so it needs no masking, and it grows with every call: it is
// encoded directly, byte for byte as json.MarshalIndent would.
func (s *Store) writeCallsView(path string, st ratelimit.State) error {
	return s.writeViewBytes(path, appendCalls(make([]byte, 0, 32+72*len(st.Calls)), st))
}

func appendCalls(b []byte, st ratelimit.State) []byte {
	b = append(b, "{\n  \"calls\": "...)
	switch {
	case st.Calls == nil:
		b = append(b, "null"...)
	case len(st.Calls) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, '[')
		for i, c := range st.Calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    {\n      \"at\": \""...)
			b = c.At.AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
			if c.Tokens != 0 {
				b = append(b, ",\n      \"tokens\": "...)
				b = strconv.AppendInt(b, c.Tokens, 10)
			}
			b = append(b, "\n    }"...)
		}
		b = append(b, "\n  ]"...)
	}
	return append(b, "\n}\n"...)
}

func (s *Store) writeViewBytes(path string, data []byte) error {
	m := s.views
	if m == nil {
		return s.writeAtomic(path, data, 0o644, false)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w, ok := m.written[path]; ok && bytes.Equal(w.data, data) {
		if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() && info.Size() == w.size && info.ModTime().Equal(w.mod) {
			return nil
		}
	}
	delete(m.written, path)
	if err := s.writeAtomic(path, data, 0o644, false); err != nil {
		return err
	}
	if info, err := os.Lstat(path); err == nil {
		if m.written == nil {
			m.written = map[string]viewWritten{}
		}
		m.written[path] = viewWritten{data: data, size: info.Size(), mod: info.ModTime()}
	}
	return nil
}
