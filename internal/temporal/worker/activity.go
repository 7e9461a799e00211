package worker

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"ralph/internal/account"
	"ralph/internal/agent"
	"ralph/internal/engine"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/serve"
	"ralph/internal/store"
	wf "ralph/internal/temporal"
	"ralph/internal/tracing"
	"ralph/internal/trust"
)

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
	// HostQueue is this worker's own queue, which a session whose tree it
	// takes over is pinned to from then on ("": none).
	HostQueue string
	// TakeoverDir, when set, is where this worker keeps the trees it takes
	// over from hosts that stopped answering (one per session).
	TakeoverDir string
	// BuildConfined is Build for a request's session: its agents run in
	// the sandbox where this machine has one (nil: Build).
	BuildConfined func(dir string, warn io.Writer) (loop.Spec, []agent.Adapter, error)
	// BuildVouched is Build for a tree taken over: its .ralphrc runs if
	// its SHA-256 is rc, the one the session's host trusted.
	BuildVouched func(dir, rc string, warn io.Writer) (loop.Spec, []agent.Adapter, error)
	// Accounts are the accounts this worker holds, by name, read from its
	// own settings; Getenv finds their keys (nil: os.Getenv).
	Accounts map[string]account.Account
	Getenv   func(string) string
	// Tracer exports each call's spans (nil: off).
	Tracer *tracing.Tracer

	// Count hears of each agent call and verify run made here: the
	// worker's metrics (nil: none).
	Count Counter

	carry carry
}

// Counter counts a worker's agent calls, from the record the workflow
// will make of each, and its verify runs (internal/metrics).
type Counter interface {
	Call(rec loop.Metrics)
	Verify(run loop.VerifyRun)
}

// Iterate runs one agent call and returns what it measured. A call that
// Looks makes the call only if it sees the files as the workflow did, and
// returns what it sees after it for the next decision. It heartbeats while
// the agent runs; a cancelled workflow cancels the call (and its process
// group) through the heartbeat's answer. A call From a snapshot
// first takes the session's tree over; a call with Push publishes the tree
// when it is done.
func (a *Activities) Iterate(ctx context.Context, in wf.IterateInput) (wf.IterateOutput, error) {
	log := a.Log
	if log == nil {
		log = io.Discard
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(log, "%s [%s] %s\n", time.Now().UTC().Format(time.RFC3339), in.Session, fmt.Sprintf(format, args...))
	}
	info := activity.GetInfo(ctx)
	dir, err := a.workspace(ctx, in, logf)
	if err != nil {
		return wf.IterateOutput{}, err
	}
	accountEnv, err := a.accountEnv(in.Account)
	if err != nil {
		return wf.IterateOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), wf.ErrConfig, err)
	}
	rc := trust.Sum(dir)
	// The session's last call here left its settings and its snapshot
	// (carry.go); the settings hold while what they were read from does.
	next := &carried{built: buildKey{dir: dir, rc: rc, vouched: in.Vouched, confined: in.Confined, trust: trustStamp()}}
	kept := a.carry.take(in.Session)
	if kept != nil && kept.built == next.built {
		next.spec, next.ads, next.token, next.snap = kept.spec, kept.ads, kept.token, kept.snap
	} else {
		next.spec, next.ads, err = a.builder(dir, in.Vouched, in.Confined)(dir, &prefixed{w: log, p: "[" + in.Session + "] "})
		if err != nil {
			return wf.IterateOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), wf.ErrConfig, err)
		}
		next.spec.Dir = dir
	}
	spec, ads := next.spec, next.ads
	ws := &workerStore{home: a.Home, session: in.Session, dir: dir, taskFile: in.TaskFile}
	if err := ws.EnsureDirs(); err != nil {
		return wf.IterateOutput{}, err
	}
	if err := writePrompt(ws.PromptFile(), redact.Values(in.Prompt)); err != nil {
		return wf.IterateOutput{}, err
	}
	if in.Look {
		// The files as the call would find them: if they are not what the
		// workflow decided with (a person edited the plan, a required file
		// went), the workflow decides again first.
		if seen, _ := engine.Look(ws, engine.PlanOptions(spec)); in.Seen == nil || !seen.Same(*in.Seen) {
			logf("task %s: loop %d: the files changed since the decision; it is made again", in.TaskID, in.State.Loop+1)
			out := wf.IterateOutput{Sight: &seen, Unspent: true}
			if in.From != nil {
				out.Host, out.Dir = a.HostQueue, dir
			}
			// No call ran: what the last one left still holds.
			a.carry.put(in.Session, next)
			return out, nil
		}
	}
	logf("task %s: loop %d, attempt %d", in.TaskID, in.State.Loop+1, info.Attempt)
	run := a.Tracer.StartCall(tracing.RunInfo{TaskID: in.TaskID, Session: in.Session, Agents: spec.Agents}, int(info.Attempt))
	defer run.End()
	deps := engine.Deps{Agents: ads, Store: ws, CallEnv: run.CallEnv, AccountEnv: accountEnv,
		Emit: func(ev loop.Event) {
			run.Observe(ev)
			if ev.Type == loop.EventWarning || ev.Type == loop.EventError {
				fmt.Fprintf(log, "%s [%s] %s\n", ev.At.UTC().Format(time.RFC3339), in.Session, store.Redact(ev.Message))
			}
		}}
	if in.Gate {
		// The call asks a person through its workflow, which the daemon
		// watches (gate.go); the heartbeat goes on while it waits.
		if cg, err := newCallGate(ctx, spec.ApprovalTimeout); err != nil {
			logf("no gate for the call: %v", err)
		} else {
			deps.Gate, deps.Decisions = cg.g, cg.take
		}
	}
	eng := engine.New(spec, deps)
	// The guard Measure takes on a sandboxed session's git stays until the
	// handover below has run its git too.
	defer eng.Release()
	if next.snap != nil && in.Before == next.token && in.From == nil {
		// The workflow folded the call that took it, here, last: no call
		// ran on the tree since (a retried attempt brings the token of the
		// call before, which a finished attempt here replaced).
		eng.Continue(next.snap)
	}
	stopBeat := a.heartbeat(ctx, in.State.Loop+1)
	eng.CapCalls(in.MaxBudgetUSD)
	from := loop.AdoptSession(in.State, in.AgentSession, time.Now().UTC().Round(0))
	it, ok, err := eng.Measure(ctx, from, in.Agent)
	stopBeat()
	if ok {
		run.Measured(it)
	}
	if ok && err == nil && a.Count != nil {
		// Folded here only to count the call as its record will read
		// (this call's share of a running total, its outcome): the
		// workflow decides.
		st, d := loop.Fold(from, it, spec.Policy)
		a.Count.Call(loop.Record(it, d, st))
	}
	out := wf.IterateOutput{Iteration: it}
	switch {
	case err != nil:
		return out, temporal.NewNonRetryableApplicationError(err.Error(), wf.ErrConfig, err)
	case !ok:
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		return out, fmt.Errorf("the agent call was interrupted")
	}
	if err := serve.RewriteTaskStatus(in.TaskFile, it.Observed.Status, it.Observed.StatusBlock); err != nil {
		logf("task file: %v", err)
	}
	logf("task %s: loop %d done (exit %d, %s)", in.TaskID, it.Loop, it.ExitCode, it.Observed.Status)
	if in.Look {
		// What the next decision sees, unless a person changes it first.
		after, _ := engine.Look(ws, engine.PlanOptions(spec))
		out.Sight = &after
	}
	if in.Push != "" {
		// A failed publish costs the next takeover this call's work, not
		// the call: the workflow keeps the last snapshot.
		if u, err := gitx.RemoteURL(ctx, dir, in.Push); err != nil {
			logf("handover: remote %s: %v", in.Push, err)
		} else if commit, err := gitx.Publish(ctx, dir, u, in.Ref); err != nil {
			logf("%v", err)
		} else {
			out.Snapshot = &wf.Snapshot{URL: u, Ref: in.Ref, Commit: commit, RC: rc}
		}
	}
	if in.From != nil {
		out.Host, out.Dir = a.HostQueue, dir
	}
	next.token, next.snap = "", eng.Carried()
	if next.snap != nil {
		next.token = newToken()
		out.After = next.token
	}
	a.carry.put(in.Session, next)
	return out, nil
}

// accountEnv is engine.Deps.AccountEnv for a call under the account
// named name ("": nil, the worker's own login), as the local engine adds
// it: the account's login for its agent's calls, none for another agent's.
// A worker asked for an account it does not hold fails the call: it would
// run under whatever login the machine has.
func (a *Activities) accountEnv(name string) (func(string) ([]string, string), error) {
	if name == "" {
		return nil, nil
	}
	acct, ok := a.Accounts[name]
	if !ok {
		return nil, fmt.Errorf("account %s: this worker does not hold it (ralph worker --accounts)", name)
	}
	getenv := a.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(agent string) ([]string, string) {
		if agent != acct.Agent {
			return nil, ""
		}
		return acct.Env(getenv), ""
	}, nil
}

// workspace is the call's working tree: the session's, or for a takeover
// this worker's copy of it, brought to the snapshot.
func (a *Activities) workspace(ctx context.Context, in wf.IterateInput, logf func(string, ...any)) (string, error) {
	if in.From == nil {
		return in.Dir, nil
	}
	if a.TakeoverDir == "" {
		return "", temporal.NewNonRetryableApplicationError("this worker takes no trees over (ralph worker --takeover DIR)", wf.ErrConfig, nil)
	}
	dir := filepath.Join(a.TakeoverDir, in.Session)
	if err := gitx.Receive(ctx, dir, in.Push, in.From.URL, in.From.Ref, in.From.Commit); err != nil {
		return "", err
	}
	logf("took the tree over from %s at %s into %s", in.From.Ref, in.From.Commit[:min(12, len(in.From.Commit))], dir)
	return dir, nil
}

// holds reports whether dir is a tree this worker took over.
func (a *Activities) holds(dir string) bool {
	if a.TakeoverDir == "" {
		return false
	}
	rel, err := filepath.Rel(a.TakeoverDir, dir)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// heartbeat says the call is alive, three times per heartbeat timeout (one
// lost beat is no death), until the returned stop. The first beat is one
// period in, not at the start: the timeout runs from the start, and a beat
// is a write of the server's, so a call shorter than a period (most are
// seconds long) costs none. A call waiting for a person beats on.
func (a *Activities) heartbeat(ctx context.Context, loopN int) (stop func()) {
	info := activity.GetInfo(ctx)
	beat := a.Heartbeat
	if beat <= 0 {
		beat = max(info.HeartbeatTimeout/3, 100*time.Millisecond)
	}
	if info.HeartbeatTimeout <= 0 {
		beat = 5 * time.Second
	}
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, loopN)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// writePrompt makes the file at path hold text: a task's every call
// brings the same prompt, and a durable rewrite of it (a temporary file,
// two syncs, a rename) per call bought nothing. A file someone changed
// on the worker is written over as before.
func writePrompt(path, text string) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == text {
		return nil
	}
	return store.WriteFileAtomic(path, []byte(text), 0o644)
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

// RequiredFiles are the daemon's: the task's prompt (which the call writes
// from the workflow's input) and its task file.
func (w *workerStore) RequiredFiles() ([]string, error) {
	return store.MissingOf(store.Required{Path: w.PromptFile(), Limit: store.MaxPromptSize},
		store.Required{Path: w.taskFile, Limit: store.MaxPlanSize})
}

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

// Verify runs the session's verify command (VERIFY_CMD, as the tree's
// settings give it on this worker) for the verify gate. Without one the
// claim fails, saying so: the daemon asked for the gate.
func (a *Activities) Verify(ctx context.Context, in wf.VerifyInput) (loop.VerifyRun, error) {
	log := a.Log
	if log == nil {
		log = io.Discard
	}
	dir := in.Dir
	if dir == "" {
		return loop.VerifyRun{}, temporal.NewNonRetryableApplicationError("verify: no tree to check", wf.ErrConfig, nil)
	}
	spec, _, err := a.builder(dir, in.Vouched, in.Confined)(dir, &prefixed{w: log, p: "[" + in.Session + "] "})
	if err != nil {
		return loop.VerifyRun{}, temporal.NewNonRetryableApplicationError(err.Error(), wf.ErrConfig, err)
	}
	if spec.Verifier == nil {
		return loop.VerifyRun{ExitCode: -1, StartErr: "this worker's settings for the tree have no VERIFY_CMD"}, nil
	}
	run := spec.Verifier(ctx)
	if a.Count != nil && ctx.Err() == nil {
		a.Count.Verify(run)
	}
	fmt.Fprintf(log, "%s [%s] task %s: verify `%s` %s\n", time.Now().UTC().Format(time.RFC3339), in.Session, in.TaskID, run.Command, run.Outcome())
	return run, nil
}

// builder is how a call reads a tree's settings: a request's confined, a
// taken-over tree's trusted if its .ralphrc is the one vouched for.
func (a *Activities) builder(dir, vouched string, confined bool) func(string, io.Writer) (loop.Spec, []agent.Adapter, error) {
	build := a.Build
	if vouched != "" && a.BuildVouched != nil && a.holds(dir) {
		build = func(dir string, warn io.Writer) (loop.Spec, []agent.Adapter, error) {
			return a.BuildVouched(dir, vouched, warn)
		}
	}
	if confined && a.BuildConfined != nil {
		build = a.BuildConfined
	}
	return build
}
