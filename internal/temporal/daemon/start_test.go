package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/syncbuf"
	wf "ralph/internal/temporal"
	"ralph/internal/temporal/devserver"
)

// TestStartWaitsForTheServer: a workflow's start that meets a server
// down waits for it and starts once it answers, instead of failing the
// task (the daemon would halt it).
func TestStartWaitsForTheServer(t *testing.T) {
	srv := devserver.Start(t, filepath.Join(t.TempDir(), "temporal.db"))
	c := srv.Client()
	srv.Kill()
	log := &syncbuf.Buffer{}
	r := &Runner{Client: c, Log: log}
	type result struct {
		started bool
		err     error
	}
	got := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		_, started, err := r.start(ctx, wf.WorkflowID("down"), "q-down", wf.Input{TaskID: "down"})
		got <- result{started, err}
	}()
	time.Sleep(time.Second)
	select {
	case res := <-got:
		t.Fatalf("the start returned while the server was down: %v (%T)", res.err, res.err)
	default:
	}
	srv.Restart()
	res := <-got
	if res.err != nil || !res.started {
		t.Fatalf("after the restart: started %v, %v", res.started, res.err)
	}
	if !strings.Contains(log.String(), "task down: the Temporal server does not answer") {
		t.Errorf("log %q does not say it waits for the server", log.String())
	}
}
