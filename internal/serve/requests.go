package serve

import (
	"context"
	"fmt"
	"strings"
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
