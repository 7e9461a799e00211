package agent

// Missing lists, in the user's words, what an agent with these
// capabilities cannot do and what that switches off in the loop. The loop
// prints them once at start, so a signal that never comes is a known
// limitation rather than a silent gap in its decisions.
func (c Capabilities) Missing() []string {
	var out []string
	for _, m := range []struct {
		have bool
		say  string
	}{
		{c.StructuredOutput, "no structured output: its plain text is analysed with heuristics, so status, errors and limits are best effort"},
		{c.TokenUsage, "no token usage reports: token and cost budgets do not count its calls"},
		{c.PermissionDenials, "no permission-denial reports: the permission-denial breaker is off"},
		{c.UsageLimits, "no usage-limit reports: a provider limit looks like a failed call, with no reset time to wait for"},
		{c.SessionResume, "no session resume: every call starts a fresh session"},
		{c.ToolRestrictions, "no tool allow-list: allowed tools are ignored; restrict it with its own sandbox or permission settings"},
		{c.Streaming, "no live output: the live view stays empty until the call ends"},
	} {
		if !m.have {
			out = append(out, m.say)
		}
	}
	return out
}
