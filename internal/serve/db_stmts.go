package serve

import (
	"database/sql"
	"errors"
)

// stmts are the statements an iteration and a view run, prepared once
// when the store opens: parsing and planning them again on every call was
// a fixed cost of every iteration and every status request. database/sql
// keeps a prepared copy per connection (the writer has one; the readers
// prepare theirs on first use), and tx.Stmt reuses the writer's.
type stmts struct {
	setState, putRecord, trimRecords, putSpend, trimSpend, setGroup, clearGroup, updateTask *sql.Stmt // writer
	loadState, records, currentTasks, task                                                  *sql.Stmt // readers
}

// prepare prepares them; w nil (a read-only store) leaves the writer's out.
func (s *stmts) prepare(w, r *sql.DB) error {
	for _, p := range []struct {
		db  *sql.DB
		dst **sql.Stmt
		q   string
	}{
		{w, &s.setState, `UPDATE sessions SET state = ? WHERE name = ?`},
		{w, &s.putRecord, `INSERT OR REPLACE INTO iterations(session, loop, task_id, record) VALUES(?, ?, ?, ?)`},
		{w, &s.trimRecords, `DELETE FROM iterations WHERE session = ? AND task_id = ? AND loop <= ?`},
		{w, &s.putSpend, `INSERT OR REPLACE INTO spend(session, task_id, loop, at, cost, tokens, account)
			VALUES(?, ?, ?, ?, ?, ?, COALESCE((SELECT account FROM session_accounts WHERE session = ? AND agent = ?), ?))`},
		{w, &s.trimSpend, `DELETE FROM spend WHERE at < ?`},
		{w, &s.setGroup, `INSERT OR REPLACE INTO agents(session, pgid, start) VALUES(?, ?, ?)`},
		{w, &s.clearGroup, `DELETE FROM agents WHERE session = ?`},
		{w, &s.updateTask, `UPDATE tasks SET state = ?, max_loops = ?, loops = ?, exit_reason = ?, message = ?, questions = ?, pr_url = ?, pr_draft = ?, file = ?, updated_at = ? WHERE id = ?`},
		{r, &s.loadState, `SELECT state, agent_session FROM sessions WHERE name = ?`},
		{r, &s.records, `SELECT loop, record FROM iterations WHERE session = ? AND task_id = ? ORDER BY loop DESC LIMIT ?`},
		{r, &s.currentTasks, `SELECT ` + taskColumns + ` FROM tasks WHERE seq IN (SELECT MAX(seq) FROM tasks GROUP BY session) ORDER BY seq`},
		{r, &s.task, `SELECT ` + taskColumns + ` FROM tasks WHERE id = ?`},
	} {
		if p.db == nil {
			continue
		}
		st, err := p.db.Prepare(p.q)
		if err != nil {
			s.close()
			return err
		}
		*p.dst = st
	}
	return nil
}

func (s *stmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.setState, s.putRecord, s.trimRecords, s.putSpend, s.trimSpend, s.setGroup, s.clearGroup,
		s.updateTask, s.loadState, s.records, s.currentTasks, s.task} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
