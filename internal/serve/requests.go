package serve

import (
	"context"
	"fmt"
	"os"
	"strings"

	"ralph/internal/fleet"
)

// AddSession registers (or moves) a session while the daemon runs: a
// request from GitHub or Slack gets a worktree of its own, and a session
// for it, long after the daemon started.
func (d *Daemon) AddSession(s Session) error {
	if !sessionName.MatchString(s.Name) {
		return fmt.Errorf("session %q: not a valid name", s.Name)
	}
	if err := checkRepo(s); err != nil {
		return err
	}
	return d.db.PutSession(s)
}

// SetPRURL records the pull request a session's latest task led to, and
// whether it is a draft: the task view's pr_url and pr_draft.
func (d *Daemon) SetPRURL(session, url string, draft bool) error {
	url = strings.TrimSpace(url)
	// The task's runner writes it, as it writes the task's other changes.
	_, err := d.send(context.Background(), session, func(r *taskRunner) outcome {
		return outcome{err: r.setPRURL(url, draft)}
	})
	return err
}

// Follow moves a session's latest task, between loops, to where its pull
// request leaves it: waiting (for review, its file back from the archive
// so that the next round's loop reads it), done (merged) or cancelled
// (closed unmerged); message is what every surface shows of it. A task
// whose loop runs is left alone: its end comes first.
func (d *Daemon) Follow(session string, state fleet.State, message string) error {
	_, err := d.send(context.Background(), session, func(r *taskRunner) outcome {
		return outcome{err: r.follow(state, message)}
	})
	return err
}

func (r *taskRunner) follow(state fleet.State, message string) error {
	d := r.d
	t, err := d.db.CurrentTask(r.session)
	if err != nil {
		return err
	}
	if t.State == state && t.Message == message {
		return nil
	}
	if t.State == fleet.Running || t.State == fleet.Queued || (t.State.Finished() && !state.Finished() && t.State != fleet.Done) {
		return fmt.Errorf("task %s on session %s is %s: not following its pull request", t.ID, r.session, t.State)
	}
	if t.State.Finished() && !state.Finished() {
		path := d.opts.Home.TaskFile(r.session)
		if missing(path) && !missing(t.File) {
			if err := os.Rename(t.File, path); err != nil {
				return err
			}
		}
		t.File = path
	}
	t.State, t.Message, t.UpdatedAt = state, message, d.opts.Now()
	if state == fleet.Waiting {
		t.ExitReason = "" // the loop's end is behind it: it waits on people now
	}
	if err := d.settle(&t); err != nil {
		return err
	}
	r.load()
	return nil
}
