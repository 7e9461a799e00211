package serve

import (
	"database/sql"
	"time"

	"ralph/internal/account"
	"ralph/internal/budget"
	"ralph/internal/loop"
)

// The spend ledger: what each recorded call cost and when it ended, kept
// past the iterations' own short history so that a day's spend is known
// after any number of calls and restarts (the daily budgets, `ralph stats
// --fleet`). Written in the transaction of the call's record: a call is
// counted once, and never lost between the two.

// keepSpend is how long the ledger keeps a call: the longest day in any
// zone, and then some for the figures of the days before.
const keepSpend = 8 * 24 * time.Hour

// recordSpend adds rec's call to the ledger in tx (again: replaced), under
// the account the call ran under: the session's account of its agent,
// which the daemon keeps before the call starts (accountEnv), else the
// agent's own login (a loop on a Temporal worker, or no accounts set).
func (d *DB) recordSpend(tx *sql.Tx, session, taskID string, rec *loop.Metrics) error {
	at := spendAt(rec)
	if _, err := tx.Stmt(d.st.putSpend).Exec(session, taskID, rec.Loop, at.UnixMilli(), rec.CostUSD, callTokens(rec),
		session, rec.Agent, account.Default(rec.Agent)); err != nil {
		return err
	}
	_, err := tx.Stmt(d.st.trimSpend).Exec(at.Add(-keepSpend).UnixMilli())
	return err
}

// spendAt is when a call's spend counts: when it ended.
func spendAt(rec *loop.Metrics) time.Time {
	return rec.StartedAt.Add(time.Duration(rec.DurationMS) * time.Millisecond)
}

// callTokens are the tokens a budget counts: input and output, not the
// cache's reads (nor its writes, which the input tokens of Claude Code do
// not include either).
func callTokens(rec *loop.Metrics) int64 { return rec.InputTokens + rec.OutputTokens }

// Spend is what the fleet, each session and each account spent from since
// on.
type Spend struct {
	Fleet    budget.Spend
	Sessions map[string]budget.Spend
	// Accounts are by the account the calls ran under ("": calls recorded
	// before the ledger kept it).
	Accounts map[string]budget.Spend
}

// Spent sums the ledger's calls that ended at since or later.
func (d *DB) Spent(since time.Time) (Spend, error) {
	rows, err := d.ro.Query(`SELECT session, COUNT(*), TOTAL(cost), TOTAL(tokens), MAX(cost), MAX(tokens) FROM spend WHERE at >= ? GROUP BY session`, since.UnixMilli())
	if err != nil {
		return Spend{}, dbErr(err)
	}
	defer rows.Close()
	out := Spend{Sessions: map[string]budget.Spend{}}
	for rows.Next() {
		var name string
		var s budget.Spend
		var tokens float64
		if err := rows.Scan(&name, &s.Calls, &s.CostUSD, &tokens, &s.MaxCallCost, &s.MaxCallTokens); err != nil {
			return Spend{}, err
		}
		s.Tokens = int64(tokens)
		out.Sessions[name] = s
		f := &out.Fleet
		f.Calls += s.Calls
		f.CostUSD += s.CostUSD
		f.Tokens += s.Tokens
		f.MaxCallCost = max(f.MaxCallCost, s.MaxCallCost)
		f.MaxCallTokens = max(f.MaxCallTokens, s.MaxCallTokens)
	}
	if err := rows.Err(); err != nil {
		return Spend{}, err
	}
	out.Accounts, err = d.spentByAccount(since)
	return out, err
}

// spentByAccount sums the ledger's calls from since on by account.
func (d *DB) spentByAccount(since time.Time) (map[string]budget.Spend, error) {
	rows, err := d.ro.Query(`SELECT account, COUNT(*), TOTAL(cost), TOTAL(tokens) FROM spend WHERE at >= ? GROUP BY account`, since.UnixMilli())
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	out := map[string]budget.Spend{}
	for rows.Next() {
		var name string
		var s budget.Spend
		var tokens float64
		if err := rows.Scan(&name, &s.Calls, &s.CostUSD, &tokens); err != nil {
			return nil, err
		}
		s.Tokens = int64(tokens)
		out[name] = s
	}
	return out, rows.Err()
}

// warnOnce puts the warning n in the outbox unless the warning key was
// given before: the key and the notice go in together, so a warning is
// neither lost to a crash nor given twice a day. It says whether it went.
func (d *DB) warnOnce(key string, n *Notice, channels []string, now time.Time) (bool, error) {
	tx, err := d.db.Begin()
	if err != nil {
		return false, dbErr(err)
	}
	defer tx.Rollback()
	res, err := tx.Exec(`INSERT OR IGNORE INTO budget_warnings(key, at) VALUES(?, ?)`, key, now.UnixMilli())
	if err != nil {
		return false, dbErr(err)
	}
	if k, err := res.RowsAffected(); err != nil || k == 0 {
		return false, err
	}
	if _, err := tx.Exec(`DELETE FROM budget_warnings WHERE at < ?`, now.Add(-keepSpend).UnixMilli()); err != nil {
		return false, dbErr(err)
	}
	if err := insertNotice(tx, n, channels, now); err != nil {
		return false, dbErr(err)
	}
	return true, dbErr(tx.Commit())
}
