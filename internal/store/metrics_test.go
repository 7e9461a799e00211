package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

type record struct {
	Loop    int    `json:"loop"`
	Message string `json:"message"`
}

func TestAppendAndReadMetrics(t *testing.T) {
	p := filepath.Join(t.TempDir(), "logs", "metrics.jsonl")
	want := []record{{1, "first"}, {2, "multi\nline"}, {3, `quote " and \`}}
	for _, r := range want {
		if err := AppendMetrics(p, r); err != nil {
			t.Fatal(err)
		}
	}
	var got []record
	var lines []int
	bad, err := ReadMetrics(p, func(line int, rec json.RawMessage) error {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil {
			return err
		}
		got, lines = append(got, r), append(lines, line)
		return nil
	})
	if err != nil || bad != nil {
		t.Fatalf("bad %v, err %v", bad, err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(lines, []int{1, 2, 3}) {
		t.Fatalf("got %v at %v", got, lines)
	}
}

func TestReadMetricsDamage(t *testing.T) {
	long := `{"x":"` + strings.Repeat("a", maxMetricsLine) + `"}`
	tests := []struct {
		name      string
		content   string
		wantLines []int
		wantBad   []BadLine // Err is compared by presence only
	}{
		{"torn last line", "{\"loop\":1}\n{\"loop\":2}\n{\"loop\":3,\"mess", []int{1, 2},
			[]BadLine{{Line: 3, Torn: true}}},
		{"whole last line without newline", "{\"loop\":1}\n{\"loop\":2}", []int{1, 2}, nil},
		{"corrupt middle line", "{\"loop\":1}\ngarbage\n{\"loop\":3}\n", []int{1, 3}, []BadLine{{Line: 2}}},
		{"blank and CRLF lines", "{\"loop\":1}\r\n\n  \n{\"loop\":4}\n", []int{1, 4}, nil},
		{"not an object", "[1]\n{\"loop\":2}\n", []int{2}, []BadLine{{Line: 1}}},
		{"overlong line", "{\"loop\":1}\n" + long + "\n{\"loop\":3}\n", []int{1, 3}, []BadLine{{Line: 2}}},
		{"overlong torn line", "{\"loop\":1}\n" + long, []int{1}, []BadLine{{Line: 2, Torn: true}}},
		{"empty file", "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "metrics.jsonl")
			writeFile(t, p, tt.content)
			var lines []int
			bad, err := ReadMetrics(p, func(line int, rec json.RawMessage) error {
				if !json.Valid(rec) {
					t.Errorf("line %d: invalid record %q", line, rec)
				}
				lines = append(lines, line)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(lines, tt.wantLines) {
				t.Errorf("records at %v, want %v", lines, tt.wantLines)
			}
			if len(bad) != len(tt.wantBad) {
				t.Fatalf("bad %v, want %v", bad, tt.wantBad)
			}
			for i, b := range bad {
				w := tt.wantBad[i]
				if b.Line != w.Line || b.Torn != w.Torn || b.Err == nil {
					t.Errorf("bad[%d] = %+v, want %+v", i, b, w)
				}
				if !strings.HasPrefix(b.String(), fmt.Sprintf("line %d: ", w.Line)) {
					t.Errorf("message %q", b.String())
				}
			}
		})
	}
}

func TestReadMetricsErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadMetrics(filepath.Join(dir, "none"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(dir, "m.jsonl")
	writeFile(t, p, "{}\n{}\n{}\n")
	stop := errors.New("stop")
	calls := 0
	_, err := ReadMetrics(p, func(int, json.RawMessage) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("callback error: %v after %d calls", err, calls)
	}
}

// Appenders in parallel never interleave: every line read back is whole.
func TestAppendMetricsConcurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "metrics.jsonl")
	const goroutines, each = 8, 100
	payload := strings.Repeat("p", 3000) // several writes' worth if it were split
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if err := AppendMetrics(p, record{Loop: g*each + i, Message: payload}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	bad, err := ReadMetrics(p, func(_ int, rec json.RawMessage) error {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil || r.Message != payload || seen[r.Loop] {
			return fmt.Errorf("torn or duplicate record %.40q", rec)
		}
		seen[r.Loop] = true
		return nil
	})
	if err != nil || bad != nil || len(seen) != goroutines*each {
		t.Fatalf("err %v, bad %v, %d records", err, bad, len(seen))
	}
}

// A crash mid-append leaves a torn last line; the next record must still be
// read, and only the torn one reported.
func TestAppendAfterTornLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "metrics.jsonl")
	if err := os.WriteFile(p, []byte(`{"loop":1,"message":"ok"}`+"\n"+`{"loop":2,"mes`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendMetrics(p, record{3, "after the crash"}); err != nil {
		t.Fatal(err)
	}
	var got []int
	bad, err := ReadMetrics(p, func(_ int, rec json.RawMessage) error {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil {
			return err
		}
		got = append(got, r.Loop)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []int{1, 3}) || len(bad) != 1 || bad[0].Line != 2 {
		t.Fatalf("records %v, bad lines %v; want [1 3] and line 2 bad", got, bad)
	}
}
