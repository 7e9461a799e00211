package config

import (
	"slices"
	"strings"
	"testing"
)

func resolveAgents(t *testing.T, rc, flags Layer) Config {
	t.Helper()
	cfg, _, err := Resolve(Defaults(), rc, Layer{}, flags)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return cfg
}

func rcLayer(kv ...string) Layer {
	l := Layer{}
	for i := 0; i+1 < len(kv); i += 2 {
		key := kv[i]
		if key == "CLAUDE_CODE_CMD" { // an alias: the layer is keyed by the canonical name
			key = "AGENT_CMD"
		}
		l[key] = Entry{Value: kv[i+1], Source: Source{Kind: SourceRC, File: ".ralphrc", Line: i/2 + 1, Name: kv[i]}}
	}
	return l
}

func flagLayer(kv ...string) Layer {
	l := Layer{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = Entry{Value: kv[i+1], Source: Source{Kind: SourceFlag, Name: "--x"}}
	}
	return l
}

func TestAgentSettings(t *testing.T) {
	tests := []struct {
		name      string
		rc, flags Layer
		agent     string
		wantCmd   string
		wantModel string
	}{
		{"claude defaults", nil, nil, "claude", "claude", ""},
		{"codex main: its own command", rcLayer("AGENT_PROVIDER", "codex"), nil, "codex", "codex", ""},
		{"codex main with CODEX_MODEL", rcLayer("AGENT_PROVIDER", "codex", "CODEX_MODEL", "gpt-5-codex", "CLAUDE_MODEL", "opus"), nil, "codex", "codex", "gpt-5-codex"},
		{"the claude fallback keeps CLAUDE_MODEL", rcLayer("AGENT_PROVIDER", "codex", "CLAUDE_MODEL", "opus"), nil, "claude", "claude", "opus"},
		{"--model is the main agent's", rcLayer("AGENT_PROVIDER", "gemini", "GEMINI_MODEL", "a"), flagLayer("CLAUDE_MODEL", "b"), "gemini", "gemini", "b"},
		{"the bash tool's CLAUDE_CODE_CMD stays Claude's", rcLayer("AGENT_PROVIDER", "codex", "CLAUDE_CODE_CMD", "npx @anthropic-ai/claude-code"), nil, "codex", "codex", ""},
		{"… and runs Claude as a fallback", rcLayer("AGENT_PROVIDER", "codex", "CLAUDE_CODE_CMD", "npx @anthropic-ai/claude-code"), nil, "claude", "npx @anthropic-ai/claude-code", ""},
		{"AGENT_CMD is the main agent's", rcLayer("AGENT_PROVIDER", "gemini", "AGENT_CMD", "npx @google/gemini-cli"), nil, "gemini", "npx @google/gemini-cli", ""},
		{"a fallback's own command", rcLayer("GEMINI_CMD", "/opt/gemini"), nil, "gemini", "/opt/gemini", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := resolveAgents(t, tt.rc, tt.flags)
			if got := cfg.AgentCommand(tt.agent); got != tt.wantCmd {
				t.Errorf("AgentCommand(%s) = %q, want %q", tt.agent, got, tt.wantCmd)
			}
			if got := cfg.AgentModel(tt.agent); got != tt.wantModel {
				t.Errorf("AgentModel(%s) = %q, want %q", tt.agent, got, tt.wantModel)
			}
		})
	}
}

func TestFallbackAgents(t *testing.T) {
	cfg := resolveAgents(t, rcLayer("AGENT_PROVIDER", "codex", "FALLBACK_AGENTS", "Claude, codex,gemini,claude"), nil)
	if got := cfg.Fallbacks(); !slices.Equal(got, []string{"claude", "gemini"}) {
		t.Errorf("Fallbacks() = %v", got)
	}
	for _, bad := range []string{"command", "claude,cursor"} {
		_, _, err := Resolve(Defaults(), rcLayer("FALLBACK_AGENTS", bad), Layer{}, Layer{})
		if err == nil || !strings.Contains(err.Error(), ".ralphrc:1") {
			t.Errorf("FALLBACK_AGENTS=%s: err %v, want one naming the line", bad, err)
		}
	}
}

func TestAgentExtraArgs(t *testing.T) {
	cfg := resolveAgents(t, rcLayer("CODEX_ARGS", `-c 'model_reasoning_effort="high"'`), nil)
	got, err := cfg.AgentExtraArgs("codex")
	if err != nil || !slices.Equal(got, []string{"-c", `model_reasoning_effort="high"`}) {
		t.Errorf("AgentExtraArgs = %q, %v", got, err)
	}
	if got, err := cfg.AgentExtraArgs("claude"); len(got) != 0 || err != nil {
		t.Errorf("claude (no CLAUDE_ARGS) got %q, %v", got, err)
	}
}
