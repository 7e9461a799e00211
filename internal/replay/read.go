package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"ralph/internal/loop"
)

// maxLine bounds one line of a recording, as the store bounds a metrics
// line: a longer one is not a record.
const maxLine = 4 << 20

// Recording is what one file held: iteration records or a trace (one
// kind per file), and the lines it skipped.
type Recording struct {
	Records []Record
	Trace   []TraceLine
	// Notes are lines passed over that are no error (a torn last line).
	Notes []string
}

// probe tells the two kinds of line apart.
type probe struct {
	Begin  json.RawMessage `json:"begin"`
	Next   json.RawMessage `json:"next"`
	Fold   json.RawMessage `json:"fold"`
	Check  json.RawMessage `json:"check"`
	Loop   json.RawMessage `json:"loop"`
	Replay json.RawMessage `json:"replay"`
}

func (p probe) trace() bool {
	return p.Begin != nil || p.Next != nil || p.Fold != nil || p.Check != nil
}

// Read reads a recording: a metrics.jsonl of iteration records or a
// $RALPH_TRACE file. name is how errors name it. A line that is not a
// record is an error naming the file and line; only a torn last line (a
// write cut short by a crash, no newline) is passed over, with a note.
func Read(name string, r io.Reader) (Recording, error) {
	var rec Recording
	br := bufio.NewReaderSize(r, 64<<10)
	kind := ""
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return rec, fmt.Errorf("%s: %w", name, err)
		}
		complete := err == nil
		if len(line) > maxLine {
			return rec, fmt.Errorf("%s:%d: a line of %d bytes is not a record (at most %d)", name, n, len(line), maxLine)
		}
		text := bytes.TrimSpace(line)
		if len(text) > 0 {
			where := fmt.Sprintf("%s:%d", name, n)
			k, err := readLine(&rec, where, text, kind)
			switch {
			case err != nil && !complete:
				rec.Notes = append(rec.Notes, fmt.Sprintf("%s: torn last line skipped (%v)", where, err))
			case err != nil:
				return rec, err
			default:
				kind = k
			}
		}
		if !complete {
			return rec, nil
		}
	}
}

func readLine(rec *Recording, where string, text []byte, kind string) (string, error) {
	var p probe
	if err := json.Unmarshal(text, &p); err != nil {
		return "", fmt.Errorf("%s: not a JSON record: %v", where, err)
	}
	k := "records"
	switch {
	case p.trace():
		k = "trace"
	case p.Loop == nil:
		return "", fmt.Errorf("%s: neither an iteration record (no loop) nor a decision trace line", where)
	}
	if kind != "" && k != kind {
		return "", fmt.Errorf("%s: a %s line in a file of %s", where, k, kind)
	}
	if k == "trace" {
		var t loop.Trace
		if err := json.Unmarshal(text, &t); err != nil {
			return "", fmt.Errorf("%s: bad trace line: %v", where, err)
		}
		if t.Begin != nil {
			if err := t.Begin.Validate(); err != nil {
				return "", fmt.Errorf("%s: bad state: %v", where, err)
			}
		}
		rec.Trace = append(rec.Trace, TraceLine{Where: where, Trace: t})
		return k, nil
	}
	m, err := DecodeRecord(text)
	if err != nil {
		return "", fmt.Errorf("%s: %v", where, err)
	}
	rec.Records = append(rec.Records, Record{Where: where, Metric: m})
	return k, nil
}

// DecodeRecord reads one iteration record (a metrics line, a daemon's
// iteration row) and checks the replay inputs it carries.
func DecodeRecord(doc []byte) (loop.Metrics, error) {
	var m loop.Metrics
	if err := json.Unmarshal(doc, &m); err != nil {
		return m, fmt.Errorf("bad iteration record: %v", err)
	}
	if m.Loop < 0 {
		return m, fmt.Errorf("bad iteration record: loop %d", m.Loop)
	}
	if m.Replay != nil && NotReplayable(m) == "" {
		if err := m.Replay.Before.Validate(); err != nil {
			return m, fmt.Errorf("bad replay inputs: the state before the call: %v", err)
		}
	}
	return m, nil
}
