package serve

import "slices"

// "Allow for this task": the exact tool calls a person allowed for the rest
// of a task, kept in the store.

// granted reports a tool call (by its grant key) the task's "allow for
// this task" covers. The grants are kept in the store: a restart keeps
// them.
func (r *taskRunner) granted(key string) bool {
	if key == "" || r.t == nil {
		return false
	}
	r.loadGrants()
	return slices.Contains(r.grants, key)
}

// loadGrants takes the task's grants from the store, once per task.
func (r *taskRunner) loadGrants() {
	if r.grantsOf == r.t.ID {
		return
	}
	keys, err := r.d.db.Grants(r.t.ID)
	if err != nil {
		r.d.logf("[%s] grants: %v", r.session, err)
		return
	}
	r.grants, r.grantsOf = keys, r.t.ID
}

// maxGrants bounds a task's "allow for this task" decisions.
const maxGrants = 100

// grant allows the exact tool call of key for the rest of the task; false
// when there is nothing exact to allow (a Bash call without its command)
// or the task has as many grants as it may keep.
func (r *taskRunner) grant(key string) bool {
	if key == "" || r.t == nil {
		return false
	}
	r.loadGrants()
	if r.grantsOf != r.t.ID || len(r.grants) >= maxGrants {
		return false
	}
	if err := r.d.db.AddGrant(r.t.ID, key); err != nil {
		r.d.logf("[%s] grant: %v", r.session, err)
		return false
	}
	r.grants = append(r.grants, key)
	return true
}
