package serve

import (
	"fmt"

	"ralph/internal/account"
	"ralph/internal/loop"
)

// A loop elsewhere (Temporal) runs under the account the daemon chooses
// as it hands the loop over, as a local loop's call does right before it
// starts: the name goes to the workflow, and only the workers holding that
// account run its calls, under their own setting of it.

// elsewhereAccounts chooses, by agent, the account session's loop runs
// under elsewhere (none for an agent without accounts set), remembered
// as its last.
func (d *Daemon) elsewhereAccounts(session string, agents []string) map[string]string {
	var out map[string]string
	type kept struct{ agent, name string }
	var changed []kept
	d.actMu.Lock()
	now := d.opts.Now()
	for _, agent := range agents {
		a, _, has := d.choose(session, agent, now, true)
		if !has {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[agent] = a.Name
		if d.quota.last[session] == nil {
			d.quota.last[session] = map[string]string{}
		}
		if d.quota.last[session][agent] != a.Name {
			changed = append(changed, kept{agent, a.Name})
		}
		d.quota.last[session][agent] = a.Name
		d.quota.shown[session] = a.Name
	}
	d.actMu.Unlock()
	for _, k := range changed {
		if err := d.db.PutSessionAccount(session, k.agent, k.name); err != nil {
			d.logf("[%s] keep the account of %s: %v", session, k.agent, err)
		}
	}
	return out
}

// elsewhereLimits are the limits that hold a loop elsewhere: by agent,
// the window of the account it runs under (chosen), else of the agent's
// own login, which its workers run under.
func (d *Daemon) elsewhereLimits(session string, agents []string, chosen map[string]string) map[string]loop.AgentLimit {
	if len(chosen) == 0 {
		l, _ := d.sharedLimits(session, agents, false)
		return l
	}
	d.actMu.Lock()
	defer d.actMu.Unlock()
	now := d.opts.Now()
	var out map[string]loop.AgentLimit
	for _, agent := range agents {
		name := chosen[agent]
		if name == "" {
			name = account.Default(agent)
		}
		w := d.quota.windows[name]
		if !w.Held(now) {
			continue
		}
		if out == nil {
			out = map[string]loop.AgentLimit{}
		}
		out[agent] = loop.AgentLimit{Until: w.Until,
			Message: fmt.Sprintf("%s (seen by session %s: %s)", account.WaitText(w, now, d.opts.Budget.Zone), w.Session, w.Message)}
	}
	return out
}
