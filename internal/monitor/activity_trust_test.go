package monitor

import (
	"strings"
	"testing"

	"ralph/internal/agent"
)

// The dashboard shows the agent's live text with its secrets masked.
func TestActivityMasksSecrets(t *testing.T) {
	var a activity
	a.add(agent.LiveEvent{Kind: agent.LiveOutput, Text: "token ghp_SECRETSECRET here"},
		agent.LiveEvent{Kind: agent.LiveTool, Tool: "Bash", Target: "curl -H 'Authorization: Bearer abcdefgh12345678'"})
	for _, ev := range a.events {
		if strings.Contains(ev.Text+ev.Target, "SECRET") || strings.Contains(ev.Target, "abcdefgh12345678") {
			t.Errorf("secret shown: %+v", ev)
		}
	}
}
