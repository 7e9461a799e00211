package temporal

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"ralph/internal/agent"
	"ralph/internal/engine"
	"ralph/internal/loop"
	"ralph/internal/serve"
	"ralph/internal/store"
)

// ErrConfig is the error type of an iteration no retry can fix (an agent
// that cannot be built or started): the workflow fails at once.
const ErrConfig = "ralph.config"

// Activities are what a worker runs: the agent calls of the tasks whose
// workspaces it holds.
type Activities struct {
	// Home is the worker's directory: prompts and iteration logs.
	Home string
	// Build resolves a working tree's loop as `ralph run` would (its
	// .ralphrc): the agents are the worker's, as are their credentials.
	Build func(dir string, warn io.Writer) (loop.Spec, []agent.Adapter, error)
	// Log receives the engine's warnings and the worker's lines.
	Log io.Writer
	// Heartbeat is how often a running call says it is alive (0: a third
	// of the heartbeat timeout the workflow set).
	Heartbeat time.Duration
}

// Iterate runs one agent call and returns what it measured. It heartbeats
// while the agent runs; a cancelled workflow cancels the call (and its
// process group) through the heartbeat's answer.
func (a *Activities) Iterate(ctx context.Context, in IterateInput) (loop.Iteration, error) {
	log := a.Log
	if log == nil {
		log = io.Discard
	}
	info := activity.GetInfo(ctx)
	spec, ads, err := a.Build(in.Dir, &prefixed{w: log, p: "[" + in.Session + "] "})
	if err != nil {
		return loop.Iteration{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrConfig, err)
	}
	spec.Dir = in.Dir
	ws := &workerStore{home: a.Home, session: in.Session, dir: in.Dir, taskFile: in.TaskFile}
	if err := ws.EnsureDirs(); err != nil {
		return loop.Iteration{}, err
	}
	if err := store.WriteFileAtomic(ws.PromptFile(), []byte(in.Prompt), 0o644); err != nil {
		return loop.Iteration{}, err
	}
	fmt.Fprintf(log, "%s [%s] task %s: loop %d, attempt %d\n", time.Now().UTC().Format(time.RFC3339), in.Session, in.TaskID, in.State.Loop+1, info.Attempt)
	eng := engine.New(spec, engine.Deps{Agents: ads, Store: ws, Sessions: &memSession{id: in.AgentSession},
		Emit: func(ev loop.Event) {
			if ev.Type == loop.EventWarning || ev.Type == loop.EventError {
				fmt.Fprintf(log, "%s [%s] %s\n", ev.At.UTC().Format(time.RFC3339), in.Session, store.Redact(ev.Message))
			}
		}})

	// Three beats in each heartbeat timeout: one lost beat is no death.
	beat := a.Heartbeat
	if beat <= 0 {
		beat = max(info.HeartbeatTimeout/3, 100*time.Millisecond)
	}
	if info.HeartbeatTimeout <= 0 {
		beat = 5 * time.Second
	}
	hctx, stopBeat := context.WithCancel(ctx)
	defer stopBeat()
	go func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, in.State.Loop+1)
			}
		}
	}()
	activity.RecordHeartbeat(ctx, in.State.Loop+1)
	it, ok, err := eng.Measure(ctx, in.State, in.Agent)
	switch {
	case err != nil:
		return it, temporal.NewNonRetryableApplicationError(err.Error(), ErrConfig, err)
	case !ok:
		if ctx.Err() != nil {
			return it, ctx.Err()
		}
		return it, fmt.Errorf("the agent call was interrupted")
	}
	if err := serve.RewriteTaskStatus(in.TaskFile, it.Observed.Status, it.Observed.StatusBlock); err != nil {
		fmt.Fprintf(log, "%s [%s] task file: %v\n", time.Now().UTC().Format(time.RFC3339), in.Session, err)
	}
	fmt.Fprintf(log, "%s [%s] task %s: loop %d done (exit %d, %s)\n", time.Now().UTC().Format(time.RFC3339), in.Session, in.TaskID, it.Loop, it.ExitCode, it.Observed.Status)
	return it, nil
}

// workerStore is engine.Store for one call on a worker: the project is the
// working tree, the plan the task file; state is the workflow's, so the
// store keeps none.
type workerStore struct {
	home, session, dir, taskFile string
}

func (w *workerStore) logDir() string      { return filepath.Join(w.home, "logs", w.session) }
func (w *workerStore) ProjectDir() string  { return w.dir }
func (w *workerStore) PromptFile() string  { return filepath.Join(w.home, "prompts", w.session+".md") }
func (w *workerStore) FixPlanFile() string { return w.taskFile }
func (w *workerStore) ClarificationFile() string {
	return filepath.Join(w.logDir(), "clarification.md")
}
func (w *workerStore) RequiredFiles() ([]string, error) { return nil, nil }

func (w *workerStore) EnsureDirs() error {
	for _, d := range []string{w.logDir(), filepath.Dir(w.PromptFile())} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func (w *workerStore) IterationLogs(n int, start time.Time) (string, string) {
	base := filepath.Join(w.logDir(), store.IterationLogBase(n, start))
	return base + store.StdoutSuffix, base + store.StderrSuffix
}

func (w *workerStore) PruneIterationLogs(keep int) ([]string, error) {
	return store.PruneIterationLogs(w.logDir(), keep)
}

func (w *workerStore) LoadState() (loop.State, bool, []string, error) {
	return loop.State{}, false, nil, nil
}
func (w *workerStore) SaveState(loop.State, *loop.Metrics) error { return nil }
func (w *workerStore) WriteStatus(store.Status) error            { return nil }

// memSession hands the engine the agent session the workflow carries.
type memSession struct{ id string }

func (m *memSession) Current(time.Time) string           { return m.id }
func (m *memSession) Save(id string, _ time.Time) error  { m.id = id; return nil }
func (m *memSession) Reset(string, int, time.Time) error { m.id = ""; return nil }

type prefixed struct {
	w io.Writer
	p string
}

func (p *prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.p+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
