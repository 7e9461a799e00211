package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestWriteStatus(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status.json")
	st := Status{
		Timestamp: t0, LoopCount: 3, CallsMadeThisHour: 3, MaxCallsPerHour: 100,
		LastAction: "executing", Status: "running", NextReset: t0.Add(time.Hour).Format(time.RFC3339),
		StartedAt: t0.Add(-time.Hour), PID: 4242, RalphSessionID: "0b7c-uuid", Agent: "claude",
		Breaker:                BreakerStatus{State: "HALF_OPEN", Reason: "2 iterations without progress"},
		Wait:                   &Wait{Kind: "usage_limit", Until: t0.Add(2 * time.Hour), Reason: "limit; key sk-ant-api03-secretvalue"},
		Totals:                 Totals{InputTokens: 10, OutputTokens: 20, CostUSD: 0.5},
		LastAnalysis:           "ran with ANTHROPIC_API_KEY=abc123 set",
		ClarificationQuestions: []string{"Use token ghp_abcdefghijklmnopqrstuvwxyz123?", "Which DB?"},
	}
	before := st
	beforeWait := *st.Wait
	if err := WriteStatus(p, st); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before.ClarificationQuestions, st.ClarificationQuestions) || *st.Wait != beforeWait {
		t.Fatal("WriteStatus modified its argument")
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sk-ant-api03", "abc123", "ghp_"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("status.json contains %q:\n%s", secret, raw)
		}
	}
	got, err := ReadStatus(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastAnalysis != "ran with ANTHROPIC_API_KEY=[redacted] set" || got.Wait.Reason != "limit; key [redacted]" ||
		got.ClarificationQuestions[0] != "Use token [redacted]?" || got.ClarificationQuestions[1] != "Which DB?" {
		t.Errorf("redaction: %+v %+v", got.LastAnalysis, got.ClarificationQuestions)
	}
	if got.LoopCount != 3 || got.PID != 4242 || !got.Timestamp.Equal(t0) || got.Breaker.State != "HALF_OPEN" {
		t.Errorf("round trip lost fields: %+v", got)
	}
}

// The fields the bash tool's monitors read must be present even when zero.
func TestStatusKeepsLegacyKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status.json")
	if err := WriteStatus(p, Status{}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	raw, _ := os.ReadFile(p)
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"timestamp", "loop_count", "calls_made_this_hour", "max_calls_per_hour",
		"last_action", "status", "exit_reason", "next_reset", "circuit_breaker", "totals"} {
		if _, ok := m[k]; !ok {
			t.Errorf("status.json lacks %q: %s", k, raw)
		}
	}
	for _, k := range []string{"wait", "pid", "started_at"} {
		if _, ok := m[k]; ok {
			t.Errorf("status.json has unset %q", k)
		}
	}
}

// A status.json written by the bash tool reads without error.
func TestReadStatusFromBashTool(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status.json")
	writeFile(t, p, `{
    "timestamp": "2025-01-02T15:04:05+00:00",
    "loop_count": 7,
    "calls_made_this_hour": 7,
    "max_calls_per_hour": 100,
    "tokens_used_this_hour": 1234,
    "max_tokens_per_hour": 0,
    "last_action": "executing",
    "status": "running",
    "exit_reason": "",
    "sandbox": {"provider": "none"},
    "next_reset": "16:00:00"
}`)
	st, err := ReadStatus(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.LoopCount != 7 || st.TokensUsedThisHour != 1234 || st.NextReset != "16:00:00" || !st.Timestamp.Equal(t0) {
		t.Errorf("got %+v", st)
	}
}

func TestStatusBounds(t *testing.T) {
	long := strings.Repeat("é", maxStatusText) // twice the byte limit
	qs := make([]string, maxStatusQuestions+5)
	got := sanitize(Status{LastAnalysis: long, ClarificationQuestions: qs})
	if n := len(got.LastAnalysis); n > maxStatusText || !strings.HasSuffix(got.LastAnalysis, "…") {
		t.Errorf("analysis %d bytes, suffix %q", n, got.LastAnalysis[len(got.LastAnalysis)-4:])
	}
	if !strings.HasPrefix(got.LastAnalysis, "éé") || strings.ContainsRune(got.LastAnalysis, '\uFFFD') {
		t.Error("cut inside a character")
	}
	if len(got.ClarificationQuestions) != maxStatusQuestions {
		t.Errorf("%d questions kept", len(got.ClarificationQuestions))
	}
}
