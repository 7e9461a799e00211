package gate_test

import (
	"strings"
	"testing"

	"ralph/internal/gate"
	"ralph/internal/sandbox"
)

// In the sandbox each CLI reaches the gate through the call directory, the
// bridge (the test binary, under the hidden /tmp) visible; Gemini's home of
// the call's own links to a .gemini the sandbox binds.
func TestGateBwrapRealOtherAgents(t *testing.T) {
	for _, name := range []string{"codex", "gemini", "opencode"} {
		t.Run(name, func(t *testing.T) {
			sb := needBwrap(t, sandbox.Spec{Agent: name})
			p := &person{answer: "blue"}
			_, reqs := askCall(t, otherCLIs[name], p, &gate.Gate{}, sb.Wrap)
			if got := reqs[len(reqs)-1].Messages.LastToolResult(); !strings.Contains(got, "blue") || len(p.asked) != 1 {
				t.Errorf("the model received %q as the tool's result; asked %+v", got, p.asked)
			}
		})
	}
}
