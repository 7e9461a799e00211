package control

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRequests(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	type step struct {
		do   func(File) error
		want Request
		file bool // the file exists afterwards
	}
	pause := func(f File) error { return f.Pause("test", now) }
	resume := func(f File) error { return f.Resume(now) }
	stop := func(f File) error { return f.Stop("test", now) }
	clear := func(f File) error { return f.ClearStop() }
	tests := []struct {
		name  string
		steps []step
	}{
		{"pause then resume removes the file", []step{
			{pause, Request{Pause: true, PauseBy: "test", At: now}, true},
			{resume, Request{}, false},
		}},
		{"stop survives resume", []step{
			{pause, Request{Pause: true, PauseBy: "test", At: now}, true},
			{stop, Request{Pause: true, Stop: true, PauseBy: "test", StopBy: "test", At: now}, true},
			{resume, Request{Stop: true, StopBy: "test", At: now}, true},
			{clear, Request{}, false},
		}},
		{"clearing a stop keeps the pause", []step{
			{stop, Request{Stop: true, StopBy: "test", At: now}, true},
			{pause, Request{Pause: true, Stop: true, PauseBy: "test", StopBy: "test", At: now}, true},
			{clear, Request{Pause: true, PauseBy: "test", At: now}, true},
		}},
		{"resume with nothing asked", []step{{resume, Request{}, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Open(t.TempDir())
			for i, s := range tt.steps {
				if err := s.do(f); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got, err := f.Read()
				if err != nil {
					t.Fatalf("step %d: read: %v", i, err)
				}
				if !got.At.Equal(s.want.At) || got.Pause != s.want.Pause || got.Stop != s.want.Stop || got.PauseBy != s.want.PauseBy || got.StopBy != s.want.StopBy {
					t.Errorf("step %d: got %+v, want %+v", i, got, s.want)
				}
				_, err = os.Stat(f.Path())
				if exists := err == nil; exists != s.file {
					t.Errorf("step %d: file exists = %v, want %v", i, exists, s.file)
				}
			}
		})
	}
}

func TestCorruptFileIsSetAsideAndReported(t *testing.T) {
	dir := t.TempDir()
	f := Open(dir)
	if err := os.WriteFile(f.Path(), []byte(`{"stop": tru`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := f.Read()
	if err == nil {
		t.Fatal("a corrupt request file was read without error")
	}
	if got.Stop || got.Pause {
		t.Errorf("a corrupt request was obeyed: %+v", got)
	}
	if _, err := os.Stat(f.Path()); err == nil {
		t.Error("the corrupt file was left in place")
	}
	moved, _ := filepath.Glob(filepath.Join(dir, FileName+"*"))
	if len(moved) != 1 {
		t.Errorf("want the corrupt file kept aside, found %v", moved)
	}
	// Asking again works after the report.
	if err := f.Stop("test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if r, err := f.Read(); err != nil || !r.Stop {
		t.Errorf("after a new stop: %+v, %v", r, err)
	}
}
