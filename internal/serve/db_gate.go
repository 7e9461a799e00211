package serve

import (
	"encoding/json"
	"errors"

	"ralph/internal/loop"
)

// keptItem is a tool call that waits for a decision (or a question for
// its answer) inside an agent's call, as the store keeps it: from when
// its call asks until the decision reaches the agent. A restart ends the
// call but not the item: the task still shows it, a
// person decides it, and the task's next call resumes the agent session
// with the decision in its prompt. What is kept is what people see (what,
// masked), the key of the grant "allow for this task" would give (never
// the command itself) and the agent session.
type keptItem struct {
	Item, What, Key, AgentSession string
	// Kind is pendingApproval or pendingQuestion: a question the call
	// asked with the gate's ask is kept for its agent session (its answer
	// goes to the task file, as any answer does).
	Kind string
	// Decided is the decision made after the call ended; nil: none yet.
	Decided *keptDecision
}

// keptDecision is a decision on a kept approval, for the next call.
type keptDecision struct {
	Allow  bool              `json:"allow"`
	Prompt string            `json:"prompt"` // what the agent is told
	Record loop.GateDecision `json:"record"` // for the next call's receipt
}

// KeepGateItem keeps a tool call (or question) its call waits on.
func (d *DB) KeepGateItem(taskID string, k keptItem) error {
	if k.Kind == "" {
		k.Kind = pendingApproval
	}
	_, err := d.db.Exec(`INSERT OR REPLACE INTO gate_items(task_id, item, kind, what, grant_key, agent_session) VALUES(?, ?, ?, ?, ?, ?)`,
		taskID, k.Item, k.Kind, k.What, k.Key, k.AgentSession)
	return dbErr(err)
}

// DropGateItem forgets a kept tool call: decided inside its call, or no
// longer waited on.
func (d *DB) DropGateItem(taskID, item string) error {
	_, err := d.db.Exec(`DELETE FROM gate_items WHERE task_id = ? AND item = ?`, taskID, item)
	return dbErr(err)
}

// DecideGateItem keeps the decision on a tool call whose call has ended.
func (d *DB) DecideGateItem(taskID, item string, dec keptDecision) error {
	b, err := json.Marshal(dec)
	if err != nil {
		return err
	}
	_, err = d.db.Exec(`UPDATE gate_items SET decision = ? WHERE task_id = ? AND item = ?`, string(b), taskID, item)
	return dbErr(err)
}

// KeptGateItems are the task's kept tool calls, in the order they were
// asked.
func (d *DB) KeptGateItems(taskID string) ([]keptItem, error) {
	rows, err := d.db.Query(`SELECT item, kind, what, grant_key, agent_session, decision FROM gate_items WHERE task_id = ? ORDER BY rowid`, taskID)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	var out []keptItem
	for rows.Next() {
		var k keptItem
		var dec string
		if err := rows.Scan(&k.Item, &k.Kind, &k.What, &k.Key, &k.AgentSession, &dec); err != nil {
			return nil, dbErr(err)
		}
		if dec != "" {
			var kd keptDecision
			if err := json.Unmarshal([]byte(dec), &kd); err != nil {
				return nil, errors.New("gate_items: decision on " + k.Item + ": " + err.Error())
			}
			k.Decided = &kd
		}
		out = append(out, k)
	}
	return out, dbErr(rows.Err())
}

// TakeGateItems returns the task's kept tool calls and forgets them: the
// next call takes their decisions.
func (d *DB) TakeGateItems(taskID string) ([]keptItem, error) {
	out, err := d.KeptGateItems(taskID)
	if err != nil || len(out) == 0 {
		return out, err
	}
	_, err = d.db.Exec(`DELETE FROM gate_items WHERE task_id = ?`, taskID)
	return out, dbErr(err)
}

// AddGrant keeps an "allow for this task" (its key, gate.Grant.Key).
func (d *DB) AddGrant(taskID, key string) error {
	_, err := d.db.Exec(`INSERT OR IGNORE INTO gate_grants(task_id, grant_key) VALUES(?, ?)`, taskID, key)
	return dbErr(err)
}

// Grants are the task's "allow for this task" keys.
func (d *DB) Grants(taskID string) ([]string, error) {
	rows, err := d.db.Query(`SELECT grant_key FROM gate_grants WHERE task_id = ? ORDER BY rowid`, taskID)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, dbErr(err)
		}
		out = append(out, k)
	}
	return out, dbErr(rows.Err())
}
