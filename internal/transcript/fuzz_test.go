package transcript

import (
	"os"
	"path/filepath"
	"testing"

	"ralph/internal/activity"
)

// FuzzRender: any output renders without a panic, and the same whether it
// arrives whole or in pieces, as a followed log does.
func FuzzRender(f *testing.F) {
	samples, _ := filepath.Glob("testdata/*.json*")
	for _, s := range samples {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b, 7)
		}
	}
	f.Add([]byte("{\n \"response\": \"hi\"\n}\n"), 3)
	f.Add([]byte(`{"type":"error","message":"x"}`+"\n"+`{"type":"turn.failed"}`), 1)
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		n = max(1, n%64)
		whole := text(Render(in, Options{Dir: "/p", ResultLines: 2}))
		var evs []activity.Event
		r := NewRenderer(Options{Dir: "/p", ResultLines: 2}, func(e activity.Event) { evs = append(evs, e) })
		for chunk := range slicesOf(in, n) {
			_, _ = r.Write(chunk)
		}
		r.Flush()
		if got := text(evs); got != whole {
			t.Fatalf("in pieces of %d:\n%s\nwhole:\n%s", n, got, whole)
		}
	})
}
