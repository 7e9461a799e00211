package agenttest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCodexAndGeminiBinaries(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	for _, a := range []struct {
		envVar string
		find   func(testing.TB) string
	}{
		{"RALPH_CODEX_BIN", CodexBinary},
		{"RALPH_GEMINI_BIN", GeminiBinary},
	} {
		t.Run(a.envVar, func(t *testing.T) {
			t.Setenv("CI", "")
			t.Setenv(a.envVar, exe)
			if got := a.find(t); got != exe {
				t.Errorf("found %q, want %q", got, exe)
			}
			t.Setenv(a.envVar, missing)
			if r := call(t, func(tb testing.TB) { a.find(tb) }); r.skipped == "" || !strings.Contains(r.skipped, a.envVar) {
				t.Errorf("missing binary: skipped %q failed %q", r.skipped, r.failed)
			}
			t.Setenv("CI", "true")
			if r := call(t, func(tb testing.TB) { a.find(tb) }); r.failed == "" || !strings.Contains(r.failed, "scripts/install-agents.sh") {
				t.Errorf("missing binary under CI: skipped %q failed %q", r.skipped, r.failed)
			}
		})
	}
}

// envMap reads an environment list, failing on a duplicated key.
func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := vars[k]; dup {
			t.Errorf("%s set twice", k)
		}
		vars[k] = v
	}
	return vars
}

// checkIsolated requires the agent's own HOME and TMPDIR and no secret
// from the parent.
func checkIsolated(t *testing.T, vars map[string]string, secrets ...string) {
	t.Helper()
	for _, k := range []string{"HOME", "TMPDIR"} {
		if info, err := os.Stat(vars[k]); err != nil || !info.IsDir() {
			t.Errorf("%s = %q is not a directory: %v", k, vars[k], err)
		}
	}
	if vars["HOME"] == os.Getenv("HOME") || !strings.HasPrefix(vars["TMPDIR"], vars["HOME"]) {
		t.Errorf("HOME %q, TMPDIR %q: want a fresh HOME holding TMPDIR", vars["HOME"], vars["TMPDIR"])
	}
	for k, v := range vars {
		for _, s := range secrets {
			if strings.Contains(v, s) {
				t.Errorf("%s carries a parent secret", k)
			}
		}
	}
	if vars["PATH"] != os.Getenv("PATH") || vars["TZ"] != "UTC" {
		t.Errorf("PATH %q TZ %q", vars["PATH"], vars["TZ"])
	}
}

func TestCodexEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "real-openai-key")
	t.Setenv("CODEX_API_KEY", "real-codex-key")
	vars := envMap(t, CodexEnv(t, "http://127.0.0.1:1"))
	checkIsolated(t, vars, "real-openai-key", "real-codex-key")
	if vars[codexKeyVar] != "dummy" || len(vars) != 6 {
		t.Errorf("env = %v", vars)
	}
	if !strings.HasPrefix(vars["CODEX_HOME"], vars["HOME"]) {
		t.Errorf("CODEX_HOME %s outside HOME", vars["CODEX_HOME"])
	}
	config, err := os.ReadFile(filepath.Join(vars["CODEX_HOME"], "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`model = "` + CodexModel + `"`,
		`model_provider = "fake"`,
		`base_url = "http://127.0.0.1:1/v1"`,
		`wire_api = "responses"`,
		`env_key = "` + codexKeyVar + `"`,
		"request_max_retries = 0",
		"stream_max_retries = 0",
		"[analytics]\nenabled = false",
		"[features]\nplugins = false",
	} {
		if !strings.Contains(string(config), want) {
			t.Errorf("config.toml lacks %q:\n%s", want, config)
		}
	}
}

func TestGeminiEnv(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "real-gemini-key")
	t.Setenv("GOOGLE_API_KEY", "real-google-key")
	vars := envMap(t, GeminiEnv(t, "http://127.0.0.1:1"))
	checkIsolated(t, vars, "real-gemini-key", "real-google-key")
	want := map[string]string{
		"GEMINI_API_KEY":             "dummy",
		"GOOGLE_GEMINI_BASE_URL":     "http://127.0.0.1:1",
		"GEMINI_CLI_TRUST_WORKSPACE": "true",
	}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("%s = %q, want %q", k, vars[k], v)
		}
	}
	settings, err := os.ReadFile(filepath.Join(vars["HOME"], ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(settings); !strings.Contains(s, `"selectedType":"gemini-api-key"`) || !strings.Contains(s, `"usageStatisticsEnabled":false`) {
		t.Errorf("settings.json = %s", s)
	}
}

// TestPinnedVersionsMatchInstallScript keeps the constants and the script
// that installs the CLIs from drifting apart.
func TestPinnedVersionsMatchInstallScript(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(RepoRoot(t), "scripts", "install-agents.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, version := range map[string]string{"CLAUDE": ClaudeVersion, "CODEX": CodexVersion, "GEMINI": GeminiVersion} {
		m := regexp.MustCompile(`(?m)^` + name + `_VERSION=(\S+)$`).FindSubmatch(script)
		if m == nil || string(m[1]) != version {
			t.Errorf("install-agents.sh pins %s_VERSION=%s, agenttest says %s", name, m, version)
		}
	}
}
