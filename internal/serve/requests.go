package serve

import (
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
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.db.PutSession(s)
}

// SetPRURL records the pull request a session's latest task led to: the
// task view's pr_url.
func (d *Daemon) SetPRURL(session, url string) error {
	url = strings.TrimSpace(url)
	d.mu.Lock()
	defer d.mu.Unlock()
	t, err := d.db.CurrentTask(session)
	if err != nil {
		return err
	}
	if t.PRURL == url {
		return nil
	}
	t.PRURL = url
	if err := d.db.UpdateTask(t); err != nil {
		return err
	}
	d.publish(t, "task_pr", url)
	return nil
}
