package serve

import (
	"database/sql"
	"strings"
)

// What brings a store made by an earlier ralph up to the schema.

// laterColumns are columns added after a store may have been created:
// CREATE TABLE IF NOT EXISTS leaves an older table as it was.
var laterColumns = []struct{ table, column, decl string }{
	{"tasks", "reply_to", `TEXT NOT NULL DEFAULT ''`},
	{"tasks", "first_cost", `REAL NOT NULL DEFAULT 0`},
	{"tasks", "origin_url", `TEXT NOT NULL DEFAULT ''`},
	{"tasks", "pr_draft", `INTEGER NOT NULL DEFAULT 0`},
	// The account a call ran under: calls from before it count under
	// none.
	{"spend", "account", `TEXT NOT NULL DEFAULT ''`},
}

// rekeyIterations brings an older store's iterations under the key of
// per-task loop numbers, (session, task, loop): before, a session numbered
// its loops across its tasks, and (session, loop) was unique. The rows
// keep their numbers (their tasks' views count from each task's first
// loop, as they always did); only the key changes.
func rekeyIterations(db *sql.DB) error {
	var ddl string
	if err := db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'iterations'`).Scan(&ddl); err != nil {
		return err
	}
	if !strings.Contains(ddl, "PRIMARY KEY (session, loop)") {
		return nil
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range []string{
		`CREATE TABLE iterations_rekeyed (session TEXT NOT NULL, loop INTEGER NOT NULL, task_id TEXT NOT NULL, record TEXT NOT NULL,
			PRIMARY KEY (session, task_id, loop))`,
		`INSERT INTO iterations_rekeyed(session, loop, task_id, record) SELECT session, loop, task_id, record FROM iterations`,
		`DROP TABLE iterations`,
		`ALTER TABLE iterations_rekeyed RENAME TO iterations`,
	} {
		if _, err := tx.Exec(q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// laterTables are tables added after a store may have been created: the
// outbox (db_outbox.go) came with at-least-once notices.
const laterTables = `
CREATE TABLE IF NOT EXISTS outbox (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id    TEXT NOT NULL,
	kind       TEXT NOT NULL,
	notice     TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_deliveries (
	notice_id    INTEGER NOT NULL REFERENCES outbox(id) ON DELETE CASCADE,
	channel      TEXT NOT NULL,
	delivered_at INTEGER NOT NULL DEFAULT 0,
	tries        INTEGER NOT NULL DEFAULT 0,
	next_try     INTEGER NOT NULL DEFAULT 0,
	last_error   TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (channel, notice_id)
);
CREATE TABLE IF NOT EXISTS spend (
	session TEXT NOT NULL,
	task_id TEXT NOT NULL,
	loop    INTEGER NOT NULL,
	at      INTEGER NOT NULL,
	cost    REAL NOT NULL,
	tokens  INTEGER NOT NULL,
	PRIMARY KEY (session, task_id, loop)
);
CREATE INDEX IF NOT EXISTS spend_at ON spend(at);
CREATE TABLE IF NOT EXISTS budget_warnings (
	key TEXT PRIMARY KEY,
	at  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS usage_windows (
	account TEXT PRIMARY KEY,
	until   INTEGER NOT NULL,
	message TEXT NOT NULL,
	session TEXT NOT NULL,
	seen    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS window_usage (
	account   TEXT NOT NULL,
	kind      TEXT NOT NULL,
	used      REAL NOT NULL,
	resets_at INTEGER NOT NULL,
	seen      INTEGER NOT NULL,
	PRIMARY KEY (account, kind)
);
CREATE TABLE IF NOT EXISTS gate_items (
	task_id       TEXT NOT NULL,
	item          TEXT NOT NULL,
	kind          TEXT NOT NULL,
	what          TEXT NOT NULL,
	grant_key     TEXT NOT NULL,
	agent_session TEXT NOT NULL,
	decision      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (task_id, item)
);
CREATE TABLE IF NOT EXISTS gate_grants (
	task_id   TEXT NOT NULL,
	grant_key TEXT NOT NULL,
	PRIMARY KEY (task_id, grant_key)
);
CREATE TABLE IF NOT EXISTS session_accounts (
	session TEXT NOT NULL,
	agent   TEXT NOT NULL,
	account TEXT NOT NULL,
	PRIMARY KEY (session, agent)
);
`

// backfillSpend fills a new spend ledger from the iteration records.
const backfillSpend = `INSERT OR IGNORE INTO spend(session, task_id, loop, at, cost, tokens)
	SELECT session, task_id, loop,
		CAST((julianday(json_extract(record, '$.started_at')) - 2440587.5) * 86400000 AS INTEGER) + COALESCE(json_extract(record, '$.duration_ms'), 0),
		COALESCE(json_extract(record, '$.cost_usd'), 0),
		COALESCE(json_extract(record, '$.input_tokens'), 0) + COALESCE(json_extract(record, '$.output_tokens'), 0)
	FROM iterations WHERE json_extract(record, '$.started_at') IS NOT NULL`

// addColumns brings an older store up to the schema: its later tables,
// then its later columns.
func addColumns(db *sql.DB) error {
	var hadSpend int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'spend'`).Scan(&hadSpend); err != nil {
		return err
	}
	if _, err := db.Exec(laterTables); err != nil {
		return err
	}
	if hadSpend == 0 {
		// The day's spend so far is in the records an older ralph kept.
		if _, err := db.Exec(backfillSpend); err != nil {
			return err
		}
	}
	for _, c := range laterColumns {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.column).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := db.Exec(`ALTER TABLE ` + c.table + ` ADD COLUMN ` + c.column + ` ` + c.decl); err != nil {
				return err
			}
		}
	}
	return nil
}
