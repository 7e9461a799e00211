package serve

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"ralph/internal/redact"
)

// The outbox's rows: a notice, written in the transaction of the change
// that causes it, and one delivery row per channel configured then, which
// the channel's dispatcher marks delivered (outbox.go).

// pending is a notice a channel has yet to deliver.
type pending struct {
	notice  Notice
	rowID   int64
	tries   int
	nextTry time.Time // zero: now
}

// noticeID is the stable id of outbox row id, made at created (ms), the
// one channels dedupe by: the time keeps a store made afresh from
// repeating an id a channel remembers.
func noticeID(id, created int64) string {
	return "n" + strconv.FormatInt(id, 10) + "." + strconv.FormatInt(created, 36)
}

// insertNotice adds n to the outbox in tx, owed to every channel; it sets
// n.ID. The notice is stored masked, as tasks are.
func insertNotice(tx *sql.Tx, n *Notice, channels []string, now time.Time) error {
	n.ID = ""
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	created := now.UnixMilli()
	res, err := tx.Exec(`INSERT INTO outbox(task_id, kind, notice, created_at) VALUES(?, ?, ?, ?)`,
		n.TaskID, n.Kind, string(redact.JSON(b)), created)
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for _, c := range channels {
		if _, err := tx.Exec(`INSERT INTO outbox_deliveries(notice_id, channel) VALUES(?, ?)`, id, c); err != nil {
			return err
		}
	}
	n.ID = noticeID(id, created)
	return nil
}

// UpdateTaskNotice saves a task's changing fields and, when n is not nil,
// the notice the change causes, in one transaction: a crash leaves both or
// neither.
func (d *DB) UpdateTaskNotice(t Task, n *Notice, channels []string, now time.Time) error {
	return dbErr(d.writeTask(func() string { return t.ID }, func() error {
		tx, err := d.db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := updateTask(tx.Stmt(d.st.updateTask), t); err != nil {
			return err
		}
		if n != nil {
			if err := insertNotice(tx, n, channels, now); err != nil {
				return err
			}
		}
		return tx.Commit()
	}))
}

// AddNotice puts a notice in the outbox by itself.
func (d *DB) AddNotice(n *Notice, channels []string, now time.Time) error {
	tx, err := d.db.Begin()
	if err != nil {
		return dbErr(err)
	}
	defer tx.Rollback()
	if err := insertNotice(tx, n, channels, now); err != nil {
		return dbErr(err)
	}
	return dbErr(tx.Commit())
}

// pendingNotices are the first notices channel has yet to deliver, oldest
// first.
func (d *DB) pendingNotices(channel string, limit int) ([]pending, error) {
	rows, err := d.ro.Query(`SELECT o.id, o.created_at, o.notice, d.tries, d.next_try FROM outbox_deliveries d JOIN outbox o ON o.id = d.notice_id
		WHERE d.channel = ? AND d.delivered_at = 0 ORDER BY o.id LIMIT ?`, channel, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []pending
	for rows.Next() {
		var p pending
		var raw string
		var created, next int64
		if err := rows.Scan(&p.rowID, &created, &raw, &p.tries, &next); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(raw), &p.notice); err != nil {
			return nil, fmt.Errorf("outbox notice %d: %w", p.rowID, err)
		}
		p.notice.ID = noticeID(p.rowID, created)
		if next > 0 {
			p.nextTry = time.UnixMilli(next)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// noticeDelivered records that channel delivered notice rowID.
func (d *DB) noticeDelivered(rowID int64, channel string, at time.Time) error {
	_, err := d.db.Exec(`UPDATE outbox_deliveries SET delivered_at = ?, last_error = '' WHERE notice_id = ? AND channel = ?`,
		max(at.UnixMilli(), 1), rowID, channel)
	return dbErr(err)
}

// noticeFailed records a failed try and when to try again.
func (d *DB) noticeFailed(rowID int64, channel string, tries int, next time.Time, why string) error {
	_, err := d.db.Exec(`UPDATE outbox_deliveries SET tries = ?, next_try = ?, last_error = ? WHERE notice_id = ? AND channel = ?`,
		tries, next.UnixMilli(), clipError(redact.String(why)), rowID, channel)
	return dbErr(err)
}

func clipError(s string) string {
	if len(s) > 500 {
		s = strings.ToValidUTF8(s[:500], "") + "…"
	}
	return s
}

// pruneOutbox deletes the notices every channel delivered before
// delivered, and every notice older than stale whatever became of it; it
// returns how many of those were still owed to some channel.
func (d *DB) pruneOutbox(delivered, stale time.Time) (undelivered int64, err error) {
	tx, err := d.db.Begin()
	if err != nil {
		return 0, dbErr(err)
	}
	defer tx.Rollback()
	if err := tx.QueryRow(`SELECT COUNT(DISTINCT notice_id) FROM outbox_deliveries WHERE delivered_at = 0
		AND notice_id IN (SELECT id FROM outbox WHERE created_at < ?)`, stale.UnixMilli()).Scan(&undelivered); err != nil {
		return 0, dbErr(err)
	}
	gone := `SELECT id FROM outbox WHERE created_at < ? OR (created_at < ? AND id NOT IN (SELECT notice_id FROM outbox_deliveries WHERE delivered_at = 0))`
	for _, q := range []string{
		`DELETE FROM outbox_deliveries WHERE notice_id IN (` + gone + `)`,
		`DELETE FROM outbox WHERE id IN (` + gone + `)`,
	} {
		if _, err := tx.Exec(q, stale.UnixMilli(), delivered.UnixMilli()); err != nil {
			return 0, dbErr(err)
		}
	}
	return undelivered, dbErr(tx.Commit())
}
