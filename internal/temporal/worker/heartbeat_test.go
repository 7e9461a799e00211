package worker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	wf "ralph/internal/temporal"
)

// heartbeatEnv runs hold as an activity, counting the heartbeats it sends
// to the server.
func heartbeatEnv(t *testing.T, hold func(ctx context.Context) error) (beats *atomic.Int32) {
	t.Helper()
	beats = &atomic.Int32{}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	env.RegisterActivityWithOptions(hold, activity.RegisterOptions{Name: "hold"})
	if _, err := env.ExecuteActivity("hold"); err != nil {
		t.Fatal(err)
	}
	return beats
}

// A call shorter than a heartbeat period sends none: each beat is a write
// of the server's, and most calls last seconds.
func TestShortCallSendsNoHeartbeat(t *testing.T) {
	// A period of DefaultHeartbeat/3, as a worker's calls have.
	a := &Activities{Heartbeat: wf.DefaultHeartbeat / 3}
	beats := heartbeatEnv(t, func(ctx context.Context) error {
		stop := a.heartbeat(ctx, 1)
		stop()
		return nil
	})
	if n := beats.Load(); n != 0 {
		t.Errorf("a call that ended at once sent %d heartbeats, want none", n)
	}
}

// A longer call, such as one waiting for a person at the gate, beats on.
func TestLongCallHeartbeats(t *testing.T) {
	a := &Activities{Heartbeat: time.Millisecond}
	beat := make(chan struct{}, 1)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) {
		select {
		case beat <- struct{}{}:
		default:
		}
	})
	env.RegisterActivityWithOptions(func(ctx context.Context) error {
		stop := a.heartbeat(ctx, 1)
		defer stop()
		// Held until the call has said it is alive.
		<-beat
		return nil
	}, activity.RegisterOptions{Name: "hold"})
	if _, err := env.ExecuteActivity("hold"); err != nil {
		t.Fatal(err)
	}
}
