package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const testKey = "sk-ant-api03-SECRETSECRETSECRET"

func TestSecretsNeverPrint(t *testing.T) {
	rc, _, err := ParseRalphrc(".ralphrc", []byte("ANTHROPIC_API_KEY="+testKey+"\nMY_SERVICE_TOKEN='tok-123456'\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Resolve(Defaults(), rc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Secrets["ANTHROPIC_API_KEY"].Reveal(); got != testKey {
		t.Fatalf("Reveal = %q", got)
	}
	if src := cfg.Sources["ANTHROPIC_API_KEY"].String(); src != ".ralphrc:1" {
		t.Errorf("source = %q", src)
	}

	var dumps []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		dumps = append(dumps,
			fmt.Sprintf(verb, cfg), fmt.Sprintf(verb, &cfg), fmt.Sprintf(verb, cfg.Secrets),
			fmt.Sprintf(verb, cfg.Secrets["ANTHROPIC_API_KEY"]), fmt.Sprintf(verb, rc), fmt.Sprintf(verb, rc["ANTHROPIC_API_KEY"]))
	}
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("cfg", "key", cfg.Secrets["ANTHROPIC_API_KEY"], "secrets", cfg.Secrets)
	dumps = append(dumps, string(j), logged.String(), cfg.String())
	for _, s := range cfg.Redacted() {
		dumps = append(dumps, s.Value)
	}
	v, _ := cfg.Value("ANTHROPIC_API_KEY")
	dumps = append(dumps, v)
	for _, d := range dumps {
		if strings.Contains(d, "SECRETSECRET") || strings.Contains(d, "tok-123456") {
			t.Errorf("secret leaked: %s", d)
		}
	}
	if !strings.Contains(cfg.String(), "ANTHROPIC_API_KEY='[redacted]'  # .ralphrc:1") {
		t.Errorf("String() does not list the secret key:\n%s", cfg.String())
	}
}

func TestRedactedMasksTokensInValues(t *testing.T) {
	cfg := Defaults()
	cfg.AgentCmd = "env ANTHROPIC_API_KEY=abc123 claude --token=" + testKey
	cfg.GitHub.Issue = "https://user:hunter2@github.example/o/r/issues/1"
	cfg.Model = "ghp_abcdefghijklmnopqrstuvwxyz012345"
	out := cfg.String()
	for _, leak := range []string{"abc123", "SECRETSECRET", "hunter2", "ghp_abcdef"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q leaked:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "https://user:[redacted]@github.example") {
		t.Errorf("URL not masked as expected:\n%s", out)
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true, "DB_PASSWORD": true,
		"OPENAI_APIKEY": true, "client_secret": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"KEYBOARD": false, "TOKENS": false, "MONKEY_BUSINESS": false, "FOO": false,
	} {
		if got := isSecretName(name); got != want {
			t.Errorf("isSecretName(%s) = %v", name, got)
		}
	}
}
