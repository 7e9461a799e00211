package serve

import (
	"time"

	"ralph/internal/account"
)

// The accounts' usage windows and each session's last account, kept so
// that a restarted daemon neither calls into a limit it knew of nor
// resumes an agent session under another account than the one that
// keeps it.

// Windows are the usage windows the store knows of.
func (d *DB) Windows() ([]account.Window, error) {
	rows, err := d.ro.Query(`SELECT account, until, message, session, seen FROM usage_windows ORDER BY account`)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	var out []account.Window
	for rows.Next() {
		var w account.Window
		var until, seen int64
		if err := rows.Scan(&w.Account, &until, &w.Message, &w.Session, &seen); err != nil {
			return nil, err
		}
		w.Until, w.Seen = time.UnixMilli(until), time.UnixMilli(seen)
		out = append(out, w)
	}
	return out, rows.Err()
}

// PutWindow keeps what is known of w's account, in place of what was.
func (d *DB) PutWindow(w account.Window) error {
	_, err := d.db.Exec(`INSERT INTO usage_windows(account, until, message, session, seen) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(account) DO UPDATE SET until = excluded.until, message = excluded.message, session = excluded.session, seen = excluded.seen`,
		w.Account, w.Until.UnixMilli(), w.Message, w.Session, w.Seen.UnixMilli())
	return dbErr(err)
}

// SessionAccounts are, by session and agent, the accounts of the last
// calls.
func (d *DB) SessionAccounts() (map[string]map[string]string, error) {
	rows, err := d.ro.Query(`SELECT session, agent, account FROM session_accounts`)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var s, ag, acct string
		if err := rows.Scan(&s, &ag, &acct); err != nil {
			return nil, err
		}
		if out[s] == nil {
			out[s] = map[string]string{}
		}
		out[s][ag] = acct
	}
	return out, rows.Err()
}

// PutSessionAccount keeps the account of session's last call of agent.
func (d *DB) PutSessionAccount(session, agent, acct string) error {
	_, err := d.db.Exec(`INSERT INTO session_accounts(session, agent, account) VALUES(?, ?, ?)
		ON CONFLICT(session, agent) DO UPDATE SET account = excluded.account`, session, agent, acct)
	return dbErr(err)
}
