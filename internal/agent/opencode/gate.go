package opencode

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"ralph/internal/agent"
	"ralph/internal/gate"
)

// ConfigContentEnv is OpenCode's configuration given inline: the layer
// loaded last, merged over the user's and the project's files.
const ConfigContentEnv = "OPENCODE_CONFIG_CONTENT"

// gateEnv starts the call with ralph's gate as an MCP server, in
// OPENCODE_CONFIG_CONTENT: it reaches this call alone and leaves the
// user's configuration files as they are; a value the user gave already
// keeps all it says. The server's timeout (milliseconds) is OpenCode's
// limit on each of its tool calls, which would otherwise be
// experimental.mcp_timeout or a few seconds: it outlasts a person's wait.
// approve is switched off, since OpenCode has no permission prompt tool to
// make of it (docs/agents.md). Checked with OpenCode 1.18.33.
func gateEnv(inv agent.Invocation) ([]string, error) {
	s, ok := inv.Gate.(interface{ Stdio() gate.StdioServer })
	if !ok || inv.Gate == nil {
		return nil, nil
	}
	srv := s.Stdio()
	cfg := map[string]any{}
	if v := lookupEnv(inv.Env, ConfigContentEnv); strings.TrimSpace(v) != "" {
		if err := json.Unmarshal([]byte(v), &cfg); err != nil {
			return nil, fmt.Errorf("opencode: %s: ralph adds its gate's MCP server to it and cannot read it as JSON: %w", ConfigContentEnv, err)
		}
	}
	servers, _ := cfg["mcp"].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
	}
	servers[gate.ServerName] = map[string]any{
		"type": "local", "command": append([]string{srv.Command}, srv.Args...), "enabled": true,
		"timeout": srv.ToolTimeout.Milliseconds(),
	}
	cfg["mcp"] = servers
	tools, _ := cfg["tools"].(map[string]any)
	if tools == nil {
		tools = map[string]any{}
	}
	tools[gate.ServerName+"_"+gate.ToolApprove] = false
	cfg["tools"] = tools
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("opencode: %w", err)
	}
	return []string{ConfigContentEnv + "=" + string(b)}, nil
}

// lookupEnv is key's value in the call's environment, else in ralph's.
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return os.Getenv(key)
}
