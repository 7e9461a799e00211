package opencode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gate"
)

func TestGateEnv(t *testing.T) {
	g := &gate.Gate{Bridge: "/opt/ralph", Timeout: 10 * time.Minute}
	mine := ConfigContentEnv + `={"mcp": {"mine": {"type": "remote", "url": "http://x"}}, "tools": {"bash": false}, "model": "m"}`
	env, err := gateEnv(agent.Invocation{Gate: g, Env: []string{mine}})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := strings.CutPrefix(strings.Join(env, "\n"), ConfigContentEnv+"=")
	if len(env) != 1 || !ok {
		t.Fatalf("env %q", env)
	}
	var cfg struct {
		MCP map[string]struct {
			Type    string   `json:"type"`
			URL     string   `json:"url"`
			Command []string `json:"command"`
			Timeout int64    `json:"timeout"`
		} `json:"mcp"`
		Tools map[string]bool `json:"tools"`
		Model string          `json:"model"`
	}
	if err := json.Unmarshal([]byte(v), &cfg); err != nil {
		t.Fatal(err)
	}
	r := cfg.MCP["ralph"]
	if cfg.MCP["mine"].URL != "http://x" || cfg.Model != "m" || cfg.Tools["bash"] || r.Type != "local" ||
		strings.Join(r.Command, " ") != "/opt/ralph mcp-bridge" || r.Timeout != (15*time.Minute).Milliseconds() {
		t.Errorf("config %s", v)
	}
	if on, set := cfg.Tools["ralph_approve"]; !set || on {
		t.Errorf("approve is offered: %s", v)
	}
}

func TestGateEnvBadContent(t *testing.T) {
	_, err := gateEnv(agent.Invocation{Gate: &gate.Gate{}, Env: []string{ConfigContentEnv + "={"}})
	if err == nil || !strings.Contains(err.Error(), ConfigContentEnv) {
		t.Errorf("err %v", err)
	}
	if env, err := gateEnv(agent.Invocation{}); env != nil || err != nil {
		t.Errorf("no gate: %q, %v", env, err)
	}
}
