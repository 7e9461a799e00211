package monitor

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/loop"
)

func TestRun(t *testing.T) {
	p := newProject(t)
	p.populate()
	for _, tc := range []struct {
		input string
		want  error
	}{
		{"q", nil},
		{"\x03", ErrInterrupted},
	} {
		var out strings.Builder
		err := Run(context.Background(), Options{Source: p.source(), In: strings.NewReader(tc.input), Out: &out, NoColor: true})
		if !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("input %q: %v, want %v", tc.input, err, tc.want)
		}
		if !strings.Contains(out.String(), "Loop") {
			t.Errorf("input %q: nothing drawn", tc.input)
		}
	}
}

func TestRunEndsWithContext(t *testing.T) {
	feed := NewFeed()
	in, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Source: newProject(t).source(), Feed: feed, In: in, Out: io.Discard, NoColor: true})
	}()
	feed.Event(loop.Event{Type: loop.EventIterationStart, Loop: 1})
	feed.Live(agent.LiveEvent{Kind: agent.LiveText, Text: "hello"})
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cancelled: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
	// The engine may outlive the view: feeding a closed view never blocks.
	for range 2 * maxFeedQueue {
		feed.Live(agent.LiveEvent{Kind: agent.LiveText, Text: "late"})
	}
}
