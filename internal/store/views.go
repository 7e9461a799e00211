package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

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
	data = redact.JSON(append(data, '\n'))
	m := s.views
	if m == nil {
		return WriteViewAtomic(path, data, 0o644)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w, ok := m.written[path]; ok && bytes.Equal(w.data, data) {
		if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() && info.Size() == w.size && info.ModTime().Equal(w.mod) {
			return nil
		}
	}
	delete(m.written, path)
	if err := WriteViewAtomic(path, data, 0o644); err != nil {
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
