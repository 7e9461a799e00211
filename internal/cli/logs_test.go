package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/store"
)

// syncBuffer collects what follow writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) write(p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	return nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// startFollow follows path in the background; stop cancels it and returns
// follow's error.
func startFollow(t *testing.T, path string) (*syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- follow(ctx, path, nil, 0, time.Millisecond, out.write) }()
	return out, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("follow did not stop when its context ended")
			return nil
		}
	}
}

// Following ralph.log while the rotating writer rotates it many times loses
// no line and repeats none, and stops when the context ends.
func TestFollowAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "ralph.log")
	w, err := store.NewRotatingWriter(path, 200, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out, stop := startFollow(t, path)

	var want strings.Builder
	for i := range 100 {
		line := fmt.Sprintf("line %03d of the log\n", i)
		want.WriteString(line)
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			// Let the follower see each file before the next rotations,
			// as it would a log written at a human pace.
			waitFor(t, "line "+fmt.Sprint(i), func() bool { return strings.HasSuffix(out.String(), line) })
		}
	}
	if _, err := os.Stat(path + ".2"); err != nil {
		t.Fatalf("the writer did not rotate: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("followed\n%s\nwant\n%s", out.String(), want.String())
	}
}

// A truncated file is read again from its start; a missing one is waited for.
func TestFollowTruncateAndAppear(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.log")
	out, stop := startFollow(t, path)
	time.Sleep(5 * time.Millisecond)
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new file", func() bool { return out.String() == "one\ntwo\n" })
	if err := os.WriteFile(path, []byte("3\n"), 0o644); err != nil { // truncates
		t.Fatal(err)
	}
	waitFor(t, "the truncated file", func() bool { return out.String() == "one\ntwo\n3\n" })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestTail(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // longer than one read block
	tests := []struct {
		in   string
		n    int
		want string
		got  int
	}{
		{"", 5, "", 0},
		{"a\nb\nc\n", 0, "", 0},
		{"a\nb\nc\n", 2, "b\nc\n", 2},
		{"a\nb\nc", 2, "b\nc", 2},
		{"a\nb\nc\n", 3, "a\nb\nc\n", 3},
		{"a\nb\nc\n", 10, "a\nb\nc\n", 3},
		{"\n\n", 1, "\n", 1},
		{long + "\n" + long + "\nend\n", 2, long + "\nend\n", 2},
	}
	for _, tt := range tests {
		got, n, err := tail(strings.NewReader(tt.in), int64(len(tt.in)), tt.n)
		if err != nil || string(got) != tt.want || n != tt.got {
			t.Errorf("tail(%.20q, %d) = %.20q, %d, %v; want %.20q, %d", tt.in, tt.n, got, n, err, tt.want, tt.got)
		}
	}
}

// A log rotated a moment ago is short: the lines before come from path.1.
func TestTailLogReachesIntoRotated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ralph.log")
	for name, content := range map[string]string{path: "d\n", path + ".1": "b\nc\n", path + ".2": "a\n"} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for n, want := range map[int]string{1: "d\n", 3: "b\nc\nd\n", 9: "a\nb\nc\nd\n"} {
		if got, err := tailLog(f, 2, path, n); err != nil || string(got) != want {
			t.Errorf("tailLog(%d) = %q, %v; want %q", n, got, err, want)
		}
	}
}

func TestFindIteration(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"iteration_1_20261120T100000Z.stdout.log", "iteration_1_20261121T090000Z.stdout.log",
		"iteration_1_20261121T090000Z.stderr.log", "iteration_2_20261120T100100Z.stdout.log",
		"iteration_3_20261120T100200Z.stdout.log", "iteration_7_20261120T100300Z.stdout.log",
		"iteration_9_x.stdout.log", "ralph.log",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path, same, _, err := findIteration(dir, 1, store.StdoutSuffix)
	if err != nil || filepath.Base(path) != "iteration_1_20261121T090000Z.stdout.log" || same != 2 {
		t.Errorf("iteration 1: %s, %d, %v", path, same, err)
	}
	path, _, numbers, err := findIteration(dir, 5, store.StdoutSuffix)
	if err != nil || path != "" || ranges(numbers) != "1-3, 7" {
		t.Errorf("iteration 5: %q, %v (%s), %v", path, numbers, ranges(numbers), err)
	}
}
