package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gate"
)

func TestGateHome(t *testing.T) {
	home, call := t.TempDir(), t.TempDir()
	real := filepath.Join(home, ".gemini")
	userSettings := `{
  // mine
  "mcpServers": {"mine": {"command": "my-server"}}, /* and a "string" with // inside */
  "ui": {"theme": "a // b"}
}`
	for name, content := range map[string]string{"settings.json": userSettings, "oauth_creds.json": "{}"} {
		if err := os.MkdirAll(real, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(real, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	g := &gate.Gate{Bridge: "/opt/ralph", Timeout: 10 * time.Minute}
	env, err := gateHome(agent.Invocation{Gate: g, Env: []string{"HOME=" + home}})(call)
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(call, "gemini-home")
	if len(env) != 1 || env[0] != HomeEnv+"="+own {
		t.Fatalf("env %q", env)
	}
	b, err := os.ReadFile(filepath.Join(own, ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		MCPServers map[string]struct {
			Command      string            `json:"command"`
			Args         []string          `json:"args"`
			Env          map[string]string `json:"env"`
			Timeout      int64             `json:"timeout"`
			Trust        bool              `json:"trust"`
			IncludeTools []string          `json:"includeTools"`
		} `json:"mcpServers"`
		UI struct{ Theme string } `json:"ui"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	r := got.MCPServers["ralph"]
	if got.MCPServers["mine"].Command != "my-server" || got.UI.Theme != "a // b" || r.Command != "/opt/ralph" ||
		strings.Join(r.Args, " ") != "mcp-bridge" || r.Env["RALPH_GATE_SECRET"] != "$RALPH_GATE_SECRET" ||
		r.Env["RALPH_CALL_DIR"] != "$RALPH_CALL_DIR" || r.Timeout != (15*time.Minute).Milliseconds() || !r.Trust ||
		strings.Join(r.IncludeTools, " ") != "ask" {
		t.Errorf("settings %s", b)
	}
	for _, rel := range []string{".gemini/oauth_creds.json", ".gemini/tmp", ".gitconfig"} {
		if target, err := os.Readlink(filepath.Join(own, rel)); err != nil || target != filepath.Join(home, rel) {
			t.Errorf("%s: %q, %v", rel, target, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(real, "settings.json")); string(b) != userSettings {
		t.Errorf("the user's settings changed: %s", b)
	}
}

func TestGateHomeBadSettings(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"mcpServers": `), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := gateHome(agent.Invocation{Gate: &gate.Gate{}, Env: []string{"HOME=" + home}})(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("err %v", err)
	}
}

func TestNoGateNoHome(t *testing.T) {
	if gateHome(agent.Invocation{}) != nil {
		t.Error("a call without a gate gets a home of its own")
	}
}
