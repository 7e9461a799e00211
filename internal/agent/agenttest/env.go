package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// CodexModel is the model CodexEnv configures: one Codex has metadata for,
// so that it prints no "model metadata not found" error item and offers its
// classic tools: exec_command {"cmd": …} as a function, apply_patch as a
// free-text (custom) tool. Newer models (gpt-6-sol) get the tools in an
// additional_tools item instead, wrapped in a free-text JavaScript "exec".
const CodexModel = "gpt-5.5"

// codexKeyVar names the variable the custom provider reads its key from;
// a name of its own, so that no real OpenAI key is ever looked up.
const codexKeyVar = "RALPH_FAKE_API_KEY"

// CodexEnv returns the whole environment for a codex process talking to
// the fake at baseURL: a fresh HOME, TMPDIR and CODEX_HOME whose
// config.toml makes the fake a custom provider. Nothing else is inherited
// but PATH.
func CodexEnv(t testing.TB, baseURL string) []string {
	t.Helper()
	home, tmp := freshHome(t)
	codexHome := filepath.Join(home, ".codex")
	config := fmt.Sprintf(`# Written by ralph's agenttest: Codex against a fake model API.
model = %q
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = %q
# Otherwise a 429 or 5xx is retried for minutes.
request_max_retries = 0
stream_max_retries = 0

# Both contact outside hosts at startup (metrics; the plugin catalogue).
[analytics]
enabled = false

[features]
plugins = false
`, CodexModel, baseURL+"/v1", codexKeyVar)
	writeFile(t, filepath.Join(codexHome, "config.toml"), config)
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CODEX_HOME=" + codexHome,
		"TMPDIR=" + tmp,
		// Reset times are printed in local time; UTC keeps outputs stable.
		"TZ=UTC",
		codexKeyVar + "=dummy",
	}
}

// GeminiModel is a model to pass to Gemini CLI as -m: with a model named it
// skips the routing request that would otherwise pick one.
const GeminiModel = "gemini-2.5-pro"

// GeminiEnv returns the whole environment for a gemini process talking to
// the fake at baseURL: a fresh HOME whose settings choose API-key auth,
// and a fresh TMPDIR. Nothing else is inherited but PATH.
func GeminiEnv(t testing.TB, baseURL string) []string {
	t.Helper()
	home, tmp := freshHome(t)
	// Usage statistics go to an outside host otherwise.
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"),
		`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}`+"\n")
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"TZ=UTC",
		"GEMINI_API_KEY=dummy",
		"GOOGLE_GEMINI_BASE_URL=" + baseURL,
		// Otherwise it refuses to run headless in a folder nobody trusted
		// (exit 55); --skip-trust does the same per call.
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}
}

// OpencodeModel is the model OpencodeEnv configures. OpenCode reaches the
// fake through its built-in Anthropic provider, which speaks the Messages
// API, so no provider package has to be installed at run time.
const OpencodeModel = "anthropic/claude-sonnet-4-5"

// OpencodeEnv returns the whole environment for an opencode process talking
// to the fake at baseURL: a fresh HOME (OpenCode keeps its config, data and
// cache under it, XDG style) holding the config, and a fresh TMPDIR.
// Nothing else is inherited but PATH.
func OpencodeEnv(t testing.TB, baseURL string) []string {
	t.Helper()
	home, tmp := freshHome(t)
	// The title agent would send its own model request, which the fake
	// would take for the next iteration; autoupdate would replace the
	// pinned binary; a shared session would be uploaded.
	config := fmt.Sprintf(`{
  "model": %q,
  "provider": {"anthropic": {"options": {"baseURL": %q, "apiKey": "dummy"}}},
  "agent": {"title": {"disable": true}},
  "autoupdate": false,
  "share": "disabled"
}
`, OpencodeModel, baseURL+"/v1")
	writeFile(t, filepath.Join(home, ".config", "opencode", "opencode.json"), config)
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"TZ=UTC",
		// Otherwise it downloads the model catalogue from an outside host.
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		// Loading the config starts a background npm install of its plugin
		// SDK into the config directory; pointed at the fake, it fails at
		// once instead of downloading.
		"npm_config_registry=" + baseURL + "/npm-registry/",
	}
}

// freshHome makes a temporary HOME with a tmp directory inside.
func freshHome(t testing.TB) (home, tmp string) {
	t.Helper()
	home = t.TempDir()
	tmp = filepath.Join(home, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	return home, tmp
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatalf("agenttest: %v", err)
	}
}
