package loop

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Recorded runs replay through Next and Fold with the same decisions. The
// traces in testdata/replay were written by `ralph run` ($RALPH_TRACE) in
// the testscript runs (`go test ./internal/cli -run TestScripts
// -update-replay`) and the real-CLI runs (`go test ./internal/e2e
// -update-replay`): every exit reason, restarts, waits, fallbacks.
func TestReplayRecordedRuns(t *testing.T) {
	files, _ := filepath.Glob("testdata/replay/*.jsonl")
	if len(files) < 10 {
		t.Fatalf("%d recorded runs in testdata/replay; record them again (see the comment)", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 16<<20)
			var st State
			var p Policy
			started := false
			for n := 1; sc.Scan(); n++ {
				var tr Trace
				if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
					t.Fatalf("line %d: %v", n, err)
				}
				switch {
				case tr.Begin != nil:
					st, p, started = *tr.Begin, *tr.Policy, true
				case !started:
					t.Fatalf("line %d: a decision before the run began", n)
				case tr.Next != nil:
					var step Step
					st, step = Next(st, tr.Next.Observation, p)
					if got, want := mustJSON(t, step), mustJSON(t, tr.Next.Step); got != want {
						t.Fatalf("line %d: Next decides\n%s\nwas\n%s", n, got, want)
					}
				case tr.Fold != nil:
					var d Decision
					st, d = Fold(st, tr.Fold.Iteration, p)
					if got, want := mustJSON(t, d), mustJSON(t, tr.Fold.Decision); got != want {
						t.Fatalf("line %d: Fold decides\n%s\nwas\n%s", n, got, want)
					}
				case tr.Check != nil:
					var d Decision
					st, d = Checked(st, tr.Check.Claim, tr.Check.Run, p)
					if got, want := mustJSON(t, d), mustJSON(t, tr.Check.Decision); got != want {
						t.Fatalf("line %d: Checked decides\n%s\nwas\n%s", n, got, want)
					}
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
