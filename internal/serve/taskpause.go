package serve

// A pause asked of a running loop is kept in the store as well as in the
// loop's controller: a daemon restarted while the task was paused starts
// its loop holding again, rather than running on unasked. The loop's end
// (other than the daemon's own stop) forgets it, as a new `loop` starts
// unpaused.

// SetPaused records (by "": forgets) a pause of the task's loop.
func (d *DB) SetPaused(taskID, by string) error {
	if by == "" {
		_, err := d.db.Exec(`DELETE FROM pauses WHERE task_id = ?`, taskID)
		return dbErr(err)
	}
	_, err := d.db.Exec(`INSERT INTO pauses(task_id, by) VALUES(?, ?) ON CONFLICT(task_id) DO UPDATE SET by = excluded.by`, taskID, by)
	return dbErr(err)
}

// Paused says who paused the task's loop, if anyone did.
func (d *DB) Paused(taskID string) (by string, paused bool, err error) {
	rows, err := d.ro.Query(`SELECT by FROM pauses WHERE task_id = ?`, taskID)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	if rows.Next() {
		err = rows.Scan(&by)
		return by, err == nil, err
	}
	return "", false, rows.Err()
}

// pausedBy is Paused, logging a failure to read it (the loop then runs).
func (d *Daemon) pausedBy(taskID string) (string, bool) {
	by, paused, err := d.db.Paused(taskID)
	if err != nil {
		d.logf("task %s: pause: %v", taskID, err)
	}
	return by, paused
}
