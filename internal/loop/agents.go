package loop

import (
	"context"
	"fmt"
	"time"

	"ralph/internal/agent"
)

// AgentSpec is one agent the loop can call, with the settings that belong
// to it rather than to the run: a Codex fallback must not be handed the
// Claude model name.
type AgentSpec struct {
	Adapter       agent.Adapter
	Model, Effort string
	AllowedTools  []string
}

// AgentLimit is a provider usage limit that holds one agent back.
type AgentLimit struct {
	Until   time.Time `json:"until"`
	Message string    `json:"message,omitempty"`
}

// chooseAgent is the fallback rule: the first agent in the configured order
// whose usage limit has passed (so the primary is taken back as soon as it
// resets). When every agent is held, free is false and idx is the one that
// frees first: the loop waits for it.
func chooseAgent(names []string, limits map[string]AgentLimit, now time.Time) (idx int, free bool) {
	idx = -1
	for i, n := range names {
		l, held := limits[n]
		if !held || !now.Before(l.Until) {
			return i, true
		}
		if idx < 0 || l.Until.Before(limits[names[idx]].Until) {
			idx = i
		}
	}
	return max(idx, 0), false
}

func (e *Engine) agentNames() []string {
	names := make([]string, len(e.agents))
	for i, a := range e.agents {
		names[i] = a.Adapter.Name()
	}
	return names
}

// current is the agent the next call goes to.
func (e *Engine) current() AgentSpec { return e.agents[e.cur] }

func (e *Engine) agentName() string {
	if len(e.agents) == 1 && e.set.AgentName != "" {
		return e.set.AgentName
	}
	return e.current().Adapter.Name()
}

// announceCapabilities says once, at start, what each agent cannot report,
// so a missing signal (no permission denials from Codex, say) is a known
// limitation rather than a silent gap in the decisions.
func (e *Engine) announceCapabilities() {
	for _, a := range e.agents {
		for _, m := range a.Adapter.Capabilities().Missing() {
			e.emit(Event{Type: EventWarning, Agent: a.Adapter.Name(), Message: a.Adapter.Name() + ": " + m})
		}
	}
}

// pickAgent selects the agent for the next call, switching to a fallback
// while the current one is held by a usage limit and back once it resets.
// stop is set when the run must end instead (every agent held and told not
// to wait); waited reports that it slept, so the caller re-checks the stop
// rules before calling.
func (e *Engine) pickAgent(ctx context.Context, now time.Time) (res *Result, waited bool, err error) {
	names := e.agentNames()
	for n, l := range e.st.AgentLimits {
		if !now.Before(l.Until) {
			delete(e.st.AgentLimits, n)
		}
	}
	idx, free := chooseAgent(names, e.st.AgentLimits, now)
	if !free {
		l := e.st.AgentLimits[names[idx]]
		if e.set.Policy.ExitOnUsageLimit {
			r, err := e.finish(ReasonUsageLimit, l.Message)
			return &r, false, err
		}
		if err := e.wait(ctx, "usage_limit", l.Until, l.Message); err != nil {
			r, err := e.endWait(err)
			return &r, false, err
		}
		return nil, true, nil
	}
	if idx != e.cur {
		from, to := names[e.cur], names[idx]
		var msg string
		if l, held := e.st.AgentLimits[from]; held {
			msg = fmt.Sprintf("switching from %s to %s: %s is held by a usage limit until %s", from, to, from, l.Until.Local().Format("Jan 2 15:04 MST"))
		} else {
			msg = fmt.Sprintf("switching back from %s to %s: its usage limit has reset", from, to)
		}
		e.cur = idx
		e.st.Agent = to
		// A session id means nothing to another agent's CLI.
		if e.deps.Sessions != nil {
			if err := e.deps.Sessions.Reset("agent_switch", e.st.Loop, now); err != nil {
				e.emit(Event{Type: EventWarning, Message: "session: " + err.Error()})
			}
		}
		e.emit(Event{Type: EventAgentSwitch, Agent: to, Message: msg})
		if err := e.saveState(); err != nil {
			return nil, false, err
		}
	}
	return nil, false, nil
}

// holdAgent records that the current agent hit a usage limit. It reports
// whether another agent can take over at once.
func (e *Engine) holdAgent(out Outcome, now time.Time) bool {
	if e.st.AgentLimits == nil {
		e.st.AgentLimits = map[string]AgentLimit{}
	}
	names := e.agentNames()
	e.st.AgentLimits[names[e.cur]] = AgentLimit{Until: out.WaitUntil, Message: out.Message}
	_, free := chooseAgent(names, e.st.AgentLimits, now)
	return free
}

// restoreAgent continues with the agent a restarted run was using, if it
// is still configured: the limits that made it switch are in the state too.
func (e *Engine) restoreAgent() {
	for i, n := range e.agentNames() {
		if n == e.st.Agent {
			e.cur = i
			return
		}
	}
	e.st.Agent = e.agentNames()[0]
}
