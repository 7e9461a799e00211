package serve

import (
	"context"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/redact"
)

// Do carries out one command from any surface — the API and `ralph task`,
// the dashboard, Telegram, GitHub, Slack — and records who asked. It is
// the one way a person changes the fleet: every surface turns its input
// into a fleet.Command and renders the TaskView it gets back.
func (d *Daemon) Do(ctx context.Context, c fleet.Command) (TaskView, error) {
	if err := c.Validate(); err != nil {
		return TaskView{}, err
	}
	if c.Verb == fleet.Status {
		// A read: no runner need take part.
		return d.Status(c.Session)
	}
	// The task's runner carries the command out; commands on other tasks
	// go on meanwhile (taskrunner.go).
	by := c.Who.String()
	v, err := d.send(ctx, c.Session, func(r *taskRunner) outcome {
		var v TaskView
		var err error
		switch c.Verb {
		case fleet.Start, fleet.StartLoop:
			origin := c.Origin
			if origin == "" {
				origin = defaultOrigin(c.Who.Surface)
			}
			v, err = r.start(ctx, c.Title, origin, c.ReplyTo, c.OriginURL)
			if err == nil && c.Verb == fleet.StartLoop {
				v, err = r.loop(c.MaxLoops, by)
			}
		case fleet.Loop:
			v, err = r.loop(c.MaxLoops, by)
		case fleet.Stop:
			v, err = r.stop(by)
		case fleet.Cancel:
			return r.cancel(by)
		case fleet.Reset:
			v, err = r.reset(by)
		case fleet.Retry:
			// One message: nothing comes between the reset and the loop.
			if _, err = r.reset(by); err == nil {
				v, err = r.loop(c.MaxLoops, by)
			}
		case fleet.Answer:
			v, err = r.answer(c.Text, by)
		case fleet.Approve, fleet.Deny:
			v, err = r.decide(c.Item, c.Verb == fleet.Approve, c.ForTask, c.Text, c.Who)
		case fleet.Pause, fleet.Resume:
			v, err = r.pauseResume(c.Verb, by)
		}
		return outcome{v: v, err: err}
	})
	if err != nil {
		return v, err
	}
	d.record(v.ID, c)
	if rec, err := d.db.Commands(v.ID, commandsShown); err == nil {
		v.Commands = rec
	}
	return v, nil
}

// defaultOrigin is where a task started from a surface comes from.
func defaultOrigin(s fleet.Surface) string {
	switch s {
	case fleet.SurfaceTelegram, fleet.SurfaceGitHub, fleet.SurfaceSlack, fleet.SurfaceAPI:
		return string(s)
	case fleet.SurfaceWeb:
		return "dashboard"
	}
	return "cli"
}

// CommandRecord is one command a person gave a task, as the task's record
// shows it.
type CommandRecord struct {
	At   time.Time `json:"at"`
	Verb string    `json:"verb"`
	By   string    `json:"by"` // surface, or surface:user
}

// commandsShown is how many of a task's commands its view carries.
const commandsShown = 5

// record keeps who asked what of a task. The record is what people did; a
// failure to write it does not undo the command.
func (d *Daemon) record(taskID string, c fleet.Command) {
	if taskID == "" {
		return
	}
	if err := d.db.AddCommand(taskID, d.opts.Now(), c); err != nil {
		d.logf("task %s: recording %s: %v", taskID, c.Did(), err)
	}
}

// AddCommand stores one command of a task.
func (d *DB) AddCommand(taskID string, at time.Time, c fleet.Command) error {
	_, err := d.db.Exec(`INSERT INTO commands(task_id, at, verb, surface, user) VALUES(?, ?, ?, ?, ?)`,
		taskID, at.UTC().Format(time.RFC3339Nano), string(c.Verb), string(c.Who.Surface), redact.String(c.Who.User))
	return err
}

// Commands returns a task's last n commands, oldest first.
func (d *DB) Commands(taskID string, n int) ([]CommandRecord, error) {
	rows, err := d.ro.Query(`SELECT at, verb, surface, user FROM commands WHERE task_id = ? ORDER BY at DESC LIMIT ?`, taskID, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CommandRecord
	for rows.Next() {
		var at, verb, surface, user string
		if err := rows.Scan(&at, &verb, &surface, &user); err != nil {
			return nil, err
		}
		t, _ := time.Parse(time.RFC3339Nano, at)
		out = append(out, CommandRecord{At: t, Verb: verb, By: fleet.Who{Surface: fleet.Surface(surface), User: user}.String()})
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, rows.Err()
}

// APIVerbs lists the fleet commands the API takes: all of them, through
// POST /api/commands (the shape every surface uses); the older routes
// POST /api/tasks (start, and start_loop with max_loops) and
// POST /api/tasks/{session}/{verb} take the same commands.
func APIVerbs() map[fleet.Verb]string {
	out := map[fleet.Verb]string{}
	for _, v := range fleet.Verbs() {
		out[v] = "POST /api/commands"
	}
	return out
}
