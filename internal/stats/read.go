package stats

import (
	"encoding/json"
	"fmt"

	"ralph/internal/store"
)

// ReadFile streams the metrics file at path into a Report, one line at a
// time, so memory stays flat however long the history is. Lines that are
// not records are skipped and named in Report.Warnings as "path:line";
// they never fail the report. A missing file gives an error matching
// fs.ErrNotExist. The line reading is store.ReadMetrics', the same that
// every other reader of the file uses.
func ReadFile(path string, opt Options) (Report, error) {
	a := NewAccumulator(opt)
	bad, err := store.ReadMetrics(path, func(line int, rec json.RawMessage) error {
		m, err := DecodeLine(rec)
		if err != nil {
			a.Skip(path, line, err)
			return nil
		}
		a.Add(m)
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	for _, b := range bad {
		why := b.Err
		if b.Torn {
			why = fmt.Errorf("torn last line (a write in progress, or a crash): %w", b.Err)
		}
		a.Skip(path, b.Line, why)
	}
	return a.Report(), nil
}
