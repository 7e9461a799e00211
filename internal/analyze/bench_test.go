package analyze

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// What the benchmark transcripts' tools return: a file's contents and a
// test run's output.
var (
	benchFile    = strings.Repeat(`func handler(w http.ResponseWriter, r *http.Request) {\n\tif err := r.ParseForm(); err != nil {\n\t\thttp.Error(w, \"bad form\", 400)\n\t}\n}\n`, 60)
	benchTestOut = strings.Repeat(`ok  \tralph/internal/pkg\t0.012s\n`, 150)
)

// toolTurn emits the i'th tool call of a benchmark transcript and its
// result, the three kinds in turn: a file read, an edit, a test run.
func toolTurn(emit func(string), id string, i int) {
	switch i % 3 {
	case 0:
		emit(sTool(id, "Read", fmt.Sprintf(`{"file_path":"/src/pkg%d/handler.go"}`, i)))
		emit(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"tu","type":"tool_result","content":"` + benchFile + `"}]},"tool_use_result":{"type":"text","file":{"content":"` + benchFile + `"}}}`)
	case 1:
		emit(sTool(id, "Edit", fmt.Sprintf(`{"file_path":"/src/pkg%d/handler.go","old_string":"400","new_string":"http.StatusBadRequest"}`, i)))
		emit(sResult("The file has been updated.", false))
	case 2:
		emit(sTool(id, "Bash", `{"command":"go test ./...","description":"Run tests"}`))
		emit(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"tu","type":"tool_result","content":"` + benchTestOut + `","is_error":false}]}}`)
	}
}

// transcript writes a synthetic Claude stream-json transcript of about size
// bytes, shaped like a long real session: assistant text, tool calls, and
// tool results that carry most of the bytes (file contents, command output).
// With prose, about a fifth of the bytes are the agent's own words instead:
// varied sentences, some long messages with Markdown, lists and code spans.
func transcript(w io.Writer, size int64, prose bool) error {
	if prose {
		return proseTranscript(w, size)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	emit := func(s string) {
		n += int64(len(s)) + 1
		bw.WriteString(s)
		bw.WriteByte('\n')
	}
	emit(sInit("bench-session"))
	for i := 0; n < size; i++ {
		id := fmt.Sprintf("msg_%d", i)
		emit(sText(id, fmt.Sprintf("Step %d: reading the handler and running the tests. Should be quick.", i)))
		toolTurn(emit, id, i)
	}
	emit(sFinal("All tasks done."+strings.ReplaceAll(block, "\n", "\n"), `,"uuid":"final"`))
	return bw.Flush()
}

// peakHeap samples the live heap while fn runs.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak.Load()
}

func benchTranscript(b *testing.B, size int64, prose bool) {
	path := b.TempDir() + "/transcript.jsonl"
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := transcript(f, size, prose); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	b.SetBytes(st.Size())
	runtime.GC()
	var peak uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		var a *Analysis
		p := peakHeap(func() { a, err = Analyze(f, Options{ExitCode: 0, Now: testNow}) })
		f.Close()
		if err != nil || !a.ExitSignal || a.SessionID != "s-final" {
			b.Fatalf("analysis wrong: %v %+v", err, a)
		}
		peak = max(peak, p)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

func BenchmarkAnalyzeStream10MB(b *testing.B)  { benchTranscript(b, 10<<20, false) }
func BenchmarkAnalyzeStream200MB(b *testing.B) { benchTranscript(b, 200<<20, false) }

// The prose-heavy transcripts: a fifth of the bytes are assistant prose.
func BenchmarkAnalyzeStreamProse10MB(b *testing.B)  { benchTranscript(b, 10<<20, true) }
func BenchmarkAnalyzeStreamProse100MB(b *testing.B) { benchTranscript(b, 100<<20, true) }

// TestWriteBenchTranscript writes the benchmark transcript to a file for
// outside comparisons (jq, /usr/bin/time): RALPH_BENCH_OUT=path RALPH_BENCH_MB=200,
// and RALPH_BENCH_PROSE=1 for the prose-heavy one. Without RALPH_BENCH_OUT
// it writes a small one and checks the analyzer reads it as stream-json.
func TestWriteBenchTranscript(t *testing.T) {
	out := os.Getenv("RALPH_BENCH_OUT")
	mb := int64(200)
	if out == "" {
		out, mb = filepath.Join(t.TempDir(), "transcript.jsonl"), 1
		defer func() {
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if a, err := Analyze(f, Options{}); err != nil || a.Format != "stream-json" {
				t.Errorf("the benchmark transcript reads as %+v, %v", a, err)
			}
		}()
	}
	fmt.Sscan(os.Getenv("RALPH_BENCH_MB"), &mb)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := transcript(f, mb<<20, os.Getenv("RALPH_BENCH_PROSE") == "1"); err != nil {
		t.Fatal(err)
	}
}
