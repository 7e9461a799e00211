package serve

import (
	"database/sql"
	"errors"
)

// pendingAnswer is an answer a person gave a task whose loop waits for it
// while every slot is taken: the loop gets it when the scheduler gives the
// task a slot, so an answer never runs more loops than --max-parallel. It
// is kept in the store, so that a restart in between loses nothing.
type pendingAnswer struct {
	Text, By string
	To       int // the call that asked
	Loops    int // what is left of the task's budget
}

// SetPendingAnswer keeps the answer until the task's loop takes it.
func (d *DB) SetPendingAnswer(taskID string, a pendingAnswer) error {
	_, err := d.db.Exec(`INSERT INTO pending_answers(task_id, text, by, to_loop, loops) VALUES(?, ?, ?, ?, ?)
ON CONFLICT(task_id) DO UPDATE SET text = excluded.text, by = excluded.by, to_loop = excluded.to_loop, loops = excluded.loops`,
		taskID, a.Text, a.By, a.To, a.Loops)
	return dbErr(err)
}

// TakePendingAnswer returns the task's kept answer, if any, and forgets it.
func (d *DB) TakePendingAnswer(taskID string) (pendingAnswer, bool, error) {
	var a pendingAnswer
	err := d.db.QueryRow(`DELETE FROM pending_answers WHERE task_id = ? RETURNING text, by, to_loop, loops`, taskID).Scan(&a.Text, &a.By, &a.To, &a.Loops)
	if errors.Is(err, sql.ErrNoRows) {
		return pendingAnswer{}, false, nil
	}
	if err != nil {
		return pendingAnswer{}, false, dbErr(err)
	}
	return a, true, nil
}

// HasPendingAnswer reports an answer kept for the task (false when the
// store cannot say: the question is then shown again, never lost).
func (d *DB) HasPendingAnswer(taskID string) bool {
	var n int
	err := d.ro.QueryRow(`SELECT COUNT(*) FROM pending_answers WHERE task_id = ?`, taskID).Scan(&n)
	return err == nil && n > 0
}
