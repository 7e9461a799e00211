package serve

import (
	"database/sql"
	"time"

	"ralph/internal/account"
	"ralph/internal/loop"
)

// How much of each usage window an account has used, as its agent last
// reported it (Claude Code's rate-limit events), kept with the call's
// record so that a restart shows what the calls before it told.

// recordWindows keeps the windows rec's call reported under the account
// it ran under (as recordSpend finds it). A later word on a window wins;
// a figure the agent did not give keeps the one known.
func recordWindows(tx *sql.Tx, session string, rec *loop.Metrics) error {
	seen := spendAt(rec).UnixMilli()
	for _, w := range rec.Windows {
		if w.Kind == "" {
			continue
		}
		var resets int64
		if !w.ResetsAt.IsZero() {
			resets = w.ResetsAt.UnixMilli()
		}
		_, err := tx.Exec(`INSERT INTO window_usage(account, kind, used, resets_at, seen)
			VALUES(COALESCE((SELECT account FROM session_accounts WHERE session = ? AND agent = ?), ?), ?, ?, ?, ?)
			ON CONFLICT(account, kind) DO UPDATE SET
				used = CASE WHEN excluded.used >= 0 THEN excluded.used ELSE used END,
				resets_at = CASE WHEN excluded.resets_at > 0 THEN excluded.resets_at ELSE resets_at END,
				seen = excluded.seen
			WHERE excluded.seen >= seen`,
			session, rec.Agent, account.Default(rec.Agent), w.Kind, w.Used, resets, seen)
		if err != nil {
			return err
		}
	}
	return nil
}

// WindowUse is what is known of how much of one usage window an account
// has used.
type WindowUse struct {
	Kind string
	// Used is the fraction used, 0–1; negative: never said.
	Used     float64
	ResetsAt time.Time // zero: not said
	Seen     time.Time // when the call that told it ended
}

// WindowUsage is what the store knows of the accounts' windows, by
// account, each account's by kind.
func (d *DB) WindowUsage() (map[string][]WindowUse, error) {
	rows, err := d.ro.Query(`SELECT account, kind, used, resets_at, seen FROM window_usage ORDER BY account, kind`)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	out := map[string][]WindowUse{}
	for rows.Next() {
		var name string
		var w WindowUse
		var resets, seen int64
		if err := rows.Scan(&name, &w.Kind, &w.Used, &resets, &seen); err != nil {
			return nil, err
		}
		if resets > 0 {
			w.ResetsAt = time.UnixMilli(resets).UTC()
		}
		w.Seen = time.UnixMilli(seen).UTC()
		out[name] = append(out[name], w)
	}
	return out, rows.Err()
}
