package stats

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"ralph/internal/loop"
)

// writeHistory writes n realistic records, a few minutes apart.
func writeHistory(tb testing.TB, n int) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "metrics.jsonl")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		m := rec(start.Add(time.Duration(i)*7*time.Minute).Format(time.RFC3339), func(m *loop.Metrics) {
			m.Loop, m.DurationMS, m.InputTokens, m.OutputTokens, m.CostUSD = i%50+1, 90_000, 12_000, 3_000, 0.0731
			m.Summary, m.Breaker, m.FilesChanged, m.Progress = "Implemented the next task and ran the tests.", "CLOSED", 3, true
		})
		if err := enc.Encode(m); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkReadFile reads a history of 100,000 iterations. heap-KB is what
// is still live after a GC at the end of reading: flat, whatever the size.
func BenchmarkReadFile(b *testing.B) {
	p := writeHistory(b, 100_000)
	info, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(info.Size())
	b.ReportAllocs()
	var r Report
	for b.Loop() {
		if r, err = ReadFile(p, Options{Loc: time.Local}); err != nil {
			b.Fatal(err)
		}
	}
	if r.Iterations != 100_000 {
		b.Fatalf("read %d iterations", r.Iterations)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/1024, "heap-KB")
}
