package sandbox

import (
	"context"
	"strings"
	"testing"
)

// The agent provider is for the agents with a sandbox of their own; the
// others get a refusal naming what works, never an unconfined run.
func TestOpenAgentProvider(t *testing.T) {
	for _, tt := range []struct {
		spec Spec
		want string // "" opens; else a part of the refusal
		desc string
	}{
		{Spec{Provider: Agent, Agent: "claude"}, "", "agent (Claude Code sandbox settings)"},
		{Spec{Provider: Agent, Agent: "codex", Network: NetworkOn}, "", "agent (Codex --sandbox"},
		{Spec{Provider: Agent, Agent: "gemini"}, "gemini has no sandbox of its own; it works with claude", ""},
		{Spec{Provider: Agent, Agent: "opencode"}, "use SANDBOX_PROVIDER=bwrap", ""},
		{Spec{Provider: Agent, Agent: "command"}, "command has no sandbox of its own", ""},
		{Spec{Provider: Agent, Agent: "codex", Network: NetworkNone}, "SANDBOX_NETWORK=none needs bwrap", ""},
	} {
		sb, err := Open(context.Background(), tt.spec)
		if tt.want != "" {
			if sb != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open(%+v) = %v, %v; want a refusal with %q", tt.spec, sb, err, tt.want)
			}
			continue
		}
		if err != nil || !sb.Own() || sb.Wrapper() != nil {
			t.Fatalf("Open(%+v) = %+v, %v: want the agent's own sandbox, without a wrapper", tt.spec, sb, err)
		}
		if d := sb.Describe(); !strings.HasPrefix(d, tt.desc) || !strings.Contains(d, "what your user can read") {
			t.Errorf("Describe = %q: it must name the provider and what it leaves open", d)
		}
	}
	var none *Sandbox
	if none.Own() || none.Wrapper() != nil {
		t.Error("no sandbox: nothing to wrap, nothing of its own")
	}
	bw := &Sandbox{Spec: Spec{Provider: Bwrap}, Bwrap: "/usr/bin/bwrap"}
	if bw.Own() || bw.Wrapper() == nil {
		t.Error("bwrap wraps the agent")
	}
}
