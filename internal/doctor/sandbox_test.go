package doctor

import (
	"context"
	"slices"
	"testing"

	"ralph/internal/sandbox"
)

// The agent's program runs through the same wrapper the loop uses: bwrap
// wraps it, the agent's own sandbox and no sandbox leave it as it is.
func TestConfinedRunsThroughTheLoopsWrapper(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sb      *sandbox.Sandbox
		wrapped bool
	}{
		{"none", nil, false},
		{"agent", &sandbox.Sandbox{Spec: sandbox.Spec{Provider: sandbox.Agent, Agent: "codex"}}, false},
		{"bwrap", &sandbox.Sandbox{Spec: sandbox.Spec{Provider: sandbox.Bwrap, Agent: "claude"}, Bwrap: "/usr/bin/bwrap"}, true},
	} {
		var got []string
		env := Env{Run: func(_ context.Context, argv []string) (string, error) { got = argv; return "", nil }}
		_, _ = confined(env, tt.sb, "/srv/proj").Run(context.Background(), []string{"claude", "--version"})
		switch {
		case !tt.wrapped && !slices.Equal(got, []string{"claude", "--version"}):
			t.Errorf("%s: ran %q, want the argv as it is", tt.name, got)
		case tt.wrapped && (got[0] != "/usr/bin/bwrap" || !slices.Equal(got[len(got)-3:], []string{"--", "claude", "--version"}) ||
			!slices.Contains(got, "--chdir")):
			t.Errorf("%s: ran %q, want it inside bwrap", tt.name, got)
		}
	}
}
