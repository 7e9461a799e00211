package serve

import (
	"strings"

	"ralph/internal/loop"
)

// shareLimits records the limits a loop holds so that the others adopt
// them; a longer hold on an agent wins.
func (d *Daemon) shareLimits(session string, held map[string]loop.AgentLimit) {
	d.actMu.Lock()
	defer d.actMu.Unlock()
	for agent, l := range held {
		if cur, ok := d.limits[agent]; ok && !cur.Until.Before(l.Until) {
			continue
		}
		msg := l.Message
		if !strings.HasPrefix(msg, "seen by session ") {
			msg = "seen by session " + session + ": " + msg
		}
		d.limits[agent] = loop.AgentLimit{Until: l.Until, Message: msg}
	}
}

// sharedLimits is engine.Deps.SharedLimits: the limits still holding.
func (d *Daemon) sharedLimits() map[string]loop.AgentLimit {
	d.actMu.Lock()
	defer d.actMu.Unlock()
	now := d.opts.Now()
	var out map[string]loop.AgentLimit
	for agent, l := range d.limits {
		if !now.Before(l.Until) {
			delete(d.limits, agent)
			continue
		}
		if out == nil {
			out = map[string]loop.AgentLimit{}
		}
		out[agent] = l
	}
	return out
}
