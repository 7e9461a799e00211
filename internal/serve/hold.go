package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ralph/internal/engine"
	"ralph/internal/loop"
	"ralph/internal/reason"
	"ralph/internal/scarce"
	"ralph/internal/store"
)

// A task's loop may wait for something outside it: the machine's disk
// space or file descriptors (a shortage, package scarce), or its tree,
// which another ralph loops in. Neither is the task's fault, so neither
// halts it: the task shows `waiting` with the reason and the time of the
// next try, keeps its slot, and goes on by itself. The engine waits out a
// shortage in the middle of a loop itself (engine/scarce.go); the daemon
// waits out those that end a loop before or after the engine's part.

// waitTree is the wait kind of a task whose tree another ralph holds.
const waitTree = "tree_in_use"

// treePoll is how often a task waiting for its tree tries the lock: a
// `ralph run` that ends is followed within it.
const treePoll = 2 * time.Second

// treeHeldError is a task's tree held by another ralph.
type treeHeldError struct {
	dir    string
	holder *store.LockedError
}

func (e *treeHeldError) Error() string {
	who := e.holder.Holder
	if who == "" {
		who = "ralph run" // the only holder that does not name itself
	}
	if e.holder.PID > 0 && !strings.Contains(who, "pid ") {
		who += fmt.Sprintf(", pid %d", e.holder.PID)
	}
	return fmt.Sprintf("%s is in use by %s", e.dir, who)
}

// waitable says whether err ends a loop only for now, and why.
func waitable(err error) (why, kind string, ok bool) {
	var held *treeHeldError
	if errors.As(err, &held) {
		return held.Error(), waitTree, true
	}
	if r := scarce.Reason(err, ""); r != "" {
		return r, loop.WaitResources, true
	}
	return "", "", false
}

// runTask runs the task's loop, waiting out and retrying what ends it only
// for now, until it ends for good, ctx ends or a person stops it.
func (d *Daemon) runTask(ctx context.Context, t Task, w *worker) (engine.Result, []string, error) {
	defer d.hold(t.Session, "", "", time.Time{})
	announced := ""
	for n := 0; ; n++ {
		res, questions, err := d.loopTask(ctx, t, w)
		why, kind, ok := waitable(err)
		if !ok || ctx.Err() != nil {
			return res, questions, err
		}
		wait := treePoll
		if kind == loop.WaitResources {
			wait = scarce.Backoff(n)
		}
		d.hold(t.Session, why, kind, d.opts.Now().Add(wait))
		if why != announced {
			d.logf("[%s] task %s waiting: %s", t.Session, t.ID, why)
			d.publish(t, "task_waiting", why)
			announced = why
		}
		if stopped := d.sleepHeld(ctx, w, wait); stopped {
			return engine.Result{Reason: reason.Interrupted, Message: "stopped while waiting: " + why, ExitCode: reason.Interrupted.ExitCode()}, nil, nil
		}
	}
}

// sleepHeld waits, or less if a person asks the loop to stop: stopped is
// true then (the request is used up). The stop wakes it; nothing polls.
func (d *Daemon) sleepHeld(ctx context.Context, w *worker, wait time.Duration) (stopped bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-w.ctl.stopAsked():
		_ = w.ctl.ClearStop()
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// hold shows (why "": clears) what a session's loop waits for, as the
// engine's own waits are shown: the task's activity.
func (d *Daemon) hold(session, why, kind string, until time.Time) {
	d.actMu.Lock()
	defer d.actMu.Unlock()
	defer d.db.cache.touch(session)
	if why == "" {
		if a, ok := d.activity[session]; ok && a.Wait != nil && (a.Wait.Kind == waitTree || a.Wait.Kind == loop.WaitResources) {
			delete(d.activity, session)
		}
		return
	}
	d.activity[session] = store.Status{Status: "waiting", LastAction: "waiting: " + why,
		Wait: &store.Wait{Kind: kind, Until: until, Reason: why}}
}

// heldBy is what a running task's loop waits for outside it, as people
// read it ("" if nothing): such a task is shown `waiting`.
func heldBy(a store.Status) string {
	switch {
	case a.Wait == nil:
		return ""
	case a.Wait.Kind == loop.WaitBudget, a.Wait.Kind == WaitWorker:
		return a.Wait.Reason // "waiting for budget: …", "waiting for a worker …" already
	case a.Wait.Kind == waitTree, a.Wait.Kind == loop.WaitResources:
		return "waiting: " + a.Wait.Reason
	}
	return ""
}

// lockTree takes the lock `ralph run` takes in the session's directory,
// naming this daemon and the task in it, so a `ralph run` there refuses
// and says who loops; a tree held by another ralph is a *treeHeldError.
func (d *Daemon) lockTree(t Task, dir string) (*store.Lock, error) {
	path := filepath.Join(dir, store.DefaultDirName, store.LockName)
	if d.opts.LockFile != nil {
		path = d.opts.LockFile(dir)
	}
	l, err := store.AcquireLockAs(path, fmt.Sprintf("ralph serve (RALPH_HOME %s, pid %d), session %s, task %s", d.opts.Home, os.Getpid(), t.Session, t.ID))
	var held *store.LockedError
	if errors.As(err, &held) {
		return nil, &treeHeldError{dir: dir, holder: held}
	}
	return l, err
}

// dbErr marks SQLite's shortages, which carry no errno, as what they are.
func dbErr(err error) error {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return err
	}
	switch coded.Code() & 0xff {
	case sqliteFull:
		return scarce.Mark(scarce.DiskFull, fmt.Errorf("the daemon's database: %w", err))
	case sqliteCantOpen:
		// The store is open already (Open checked it): a connection of its
		// pool that cannot open the file lacks a descriptor.
		return scarce.Mark(scarce.NoFiles, fmt.Errorf("the daemon's database: %w", err))
	}
	return err
}

// SQLite's primary result codes of a write that found no space and of a
// file it could not open.
const (
	sqliteFull     = 13
	sqliteCantOpen = 14
)
