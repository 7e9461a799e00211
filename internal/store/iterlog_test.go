package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPruneIterationLogs(t *testing.T) {
	type log struct {
		n     int
		start time.Time
	}
	seq := func(from, to int) []log {
		var ls []log
		for n := from; n <= to; n++ {
			ls = append(ls, log{n, t0.Add(time.Duration(n) * time.Minute)})
		}
		return ls
	}
	tests := []struct {
		name        string
		logs        []log
		keep        int
		wantRemoved []log
	}{
		{"under the limit", seq(1, 5), 10, nil},
		{"at the limit", seq(1, 10), 10, nil},
		{"oldest numbers go", seq(1, 205), 200, seq(1, 5)},
		{"numbers, not text order", seq(8, 12), 3, seq(8, 9)}, // "10" < "8" as text
		{"same number: earlier start goes", []log{{3, t0}, {3, t0.Add(time.Hour)}, {4, t0}}, 2, []log{{3, t0}}},
		{"retention off", seq(1, 5), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, l := range tt.logs {
				base := filepath.Join(dir, IterationLogBase(l.n, l.start))
				writeFile(t, base+StdoutSuffix, "out")
				writeFile(t, base+StderrSuffix, "err")
				// Modification times run backwards, so pruning by mtime
				// would delete the newest logs.
				mt := t0.Add(-time.Duration(i) * time.Hour)
				_ = os.Chtimes(base+StdoutSuffix, mt, mt)
				_ = os.Chtimes(base+StderrSuffix, mt, mt)
			}
			others := []string{"ralph.log", "metrics.jsonl", "iteration_notes.md", "iteration_1_x.stdout.log"}
			for _, o := range others {
				writeFile(t, filepath.Join(dir, o), "keep me")
			}
			removed, err := PruneIterationLogs(dir, tt.keep)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range tt.wantRemoved {
				base := filepath.Join(dir, IterationLogBase(l.n, l.start))
				want = append(want, base+StderrSuffix, base+StdoutSuffix)
			}
			slices.Sort(want)
			if !slices.Equal(removed, want) {
				t.Fatalf("removed %v\nwant %v", removed, want)
			}
			for _, p := range removed {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s still exists", p)
				}
			}
			for _, o := range others {
				if _, err := os.Stat(filepath.Join(dir, o)); err != nil {
					t.Errorf("pruned an unrelated file %s", o)
				}
			}
		})
	}
}

func TestPruneIterationLogsMissingDir(t *testing.T) {
	if removed, err := PruneIterationLogs(filepath.Join(t.TempDir(), "nope"), 200); err != nil || removed != nil {
		t.Fatalf("%v %v", removed, err)
	}
}

func TestParseIterationLogName(t *testing.T) {
	start := time.Date(2026, 11, 21, 1, 27, 59, 0, time.UTC)
	base := IterationLogBase(12, start)
	tests := []struct {
		name string
		want IterationLogName
		ok   bool
	}{
		{base + StdoutSuffix, IterationLogName{N: 12, Start: "20261121T012759Z", Suffix: StdoutSuffix}, true},
		{base + StderrSuffix, IterationLogName{N: 12, Start: "20261121T012759Z", Suffix: StderrSuffix}, true},
		{base + ".log", IterationLogName{}, false},
		{"ralph.log", IterationLogName{}, false},
		{"iteration_x_20261121T012759Z.stdout.log", IterationLogName{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseIterationLogName(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseIterationLogName(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// Where each task numbers its loops from 1 (a daemon session), the latest
// start is the newest: a new task's loop 1 is kept over an old task's 50.
func TestPruneIterationLogsByTime(t *testing.T) {
	dir := t.TempDir()
	write := func(n int, at time.Time) string {
		base := filepath.Join(dir, IterationLogBase(n, at))
		for _, suf := range []string{StdoutSuffix, StderrSuffix} {
			if err := os.WriteFile(base+suf, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return base
	}
	old := write(50, t0)
	write(1, t0.Add(time.Hour))
	write(2, t0.Add(2*time.Hour))
	removed, err := PruneIterationLogsByTime(dir, 2)
	if err != nil || len(removed) != 2 || removed[0] != old+StderrSuffix || removed[1] != old+StdoutSuffix {
		t.Errorf("removed %q, %v; want the old task's loop 50", removed, err)
	}
}

// The store lists its logs directory only when the logs it named since its
// last listing could take it past keep, and still keeps exactly keep.
func TestStorePruneListsOnlyWhenNeeded(t *testing.T) {
	s := stateStore(t)
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	iteration := func(n int) {
		t.Helper()
		out, errPath := s.IterationLogs(n, start.Add(time.Duration(n)*time.Second))
		for _, p := range []string{out, errPath} {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	logs := func() int {
		t.Helper()
		entries, err := os.ReadDir(s.LogsDir())
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	iteration(1)
	iteration(2)
	if removed, err := s.PruneIterationLogs(3); err != nil || len(removed) > 0 {
		t.Fatalf("first prune: %v %v", removed, err)
	}
	// A log the store did not name is not seen until a listing.
	if err := os.WriteFile(filepath.Join(s.LogsDir(), IterationLogBase(0, start)+StdoutSuffix), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	iteration(3)
	if removed, err := s.PruneIterationLogs(3); err != nil || len(removed) > 0 || logs() != 7 {
		t.Fatalf("within keep: removed %v (%v), %d files", removed, err, logs())
	}
	iteration(4)
	removed, err := s.PruneIterationLogs(3)
	if err != nil || len(removed) != 3 || logs() != 6 {
		t.Fatalf("past keep: removed %v (%v), %d files", removed, err, logs())
	}
}
