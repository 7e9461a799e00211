package transcript

import (
	"fmt"

	"ralph/internal/agent"
	"ralph/internal/agent/opencode"
)

// opencode renders one event of `opencode run --format json`. The event's
// Live rendering is what the live view shows (text, tool calls, refused
// tools, errors); tool results and each step's tokens and cost are added
// here.
func (r *Renderer) opencode(line []byte) {
	ev, ok := opencode.ParseEvent(line)
	if !ok {
		return
	}
	ev.Live(r.dir, func(e agent.LiveEvent) {
		if e.Kind == agent.LiveError {
			r.errorOnce(e.Text)
			return
		}
		r.send(e)
	})
	p := ev.Part
	switch ev.Type {
	case "tool_use":
		if p.Rejected() {
			return // shown as a denial; it never ran
		}
		out, failure := p.State.OutputText(), ""
		switch exit := p.State.Metadata.Exit; {
		case p.State.Status == "error":
			out, failure = p.State.Error, "error"
		case exit != nil && *exit != 0:
			failure = fmt.Sprintf("exit %d", *exit)
		}
		r.toolResult(out, failure)
	case "step_finish":
		// Reasoning is output the provider bills as such.
		t := p.Tokens
		r.summary("step: "+p.Reason, tokens(t.Input, t.Output+t.Reasoning, t.Cache.Read, t.Cache.Write), fmt.Sprintf("$%.4f", p.Cost))
	}
}
