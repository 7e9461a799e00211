package fakeapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestLoadScriptExample(t *testing.T) {
	s, err := LoadScript("testdata/two_iterations.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Iterations); got != 3 {
		t.Fatalf("iterations = %d, want 3", got)
	}
	first := s.Iterations[0].Turns
	if len(first) != 3 || first[0].ToolUses[0].Name != "Write" || first[1].ToolUses[0].Name != "Bash" {
		t.Errorf("first iteration turns = %+v", first)
	}
	if u := first[2].Usage; u == nil || u.InputTokens != 1200 || u.CacheReadInputTokens != 900 {
		t.Errorf("usage = %+v", u)
	}
	lim := s.Iterations[1].Turns[0].Error
	if lim == nil || lim.Status != 429 || lim.UsageLimit == nil || time.Duration(lim.UsageLimit.ResetsIn) != 2*time.Hour {
		t.Errorf("usage-limit turn = %+v", lim)
	}
	if d := time.Duration(s.Iterations[2].Turns[0].Delay); d != 10*time.Millisecond {
		t.Errorf("delay = %v", d)
	}
}

func TestParseScriptRejects(t *testing.T) {
	tests := []struct {
		name, json, wantErr string
	}{
		{"unknown field", `{"iterations":[{"turns":[{"txt":"hi"}]}]}`, "unknown field"},
		{"unknown mode", `{"mode":"random","iterations":[]}`, "unknown mode"},
		{"empty iteration", `{"iterations":[{"turns":[]}]}`, "iteration 0: no turns"},
		{"empty turn", `{"iterations":[{"turns":[{}]}]}`, "needs text, tool_uses or error"},
		{"tool without name", `{"iterations":[{"turns":[{"tool_uses":[{"input":{}}]}]}]}`, "no name"},
		{"tool input not object", `{"iterations":[{"turns":[{"tool_uses":[{"name":"Bash","input":"ls"}]}]}]}`, "must be a JSON object"},
		{"tool input missing", `{"iterations":[{"turns":[{"tool_uses":[{"name":"Bash"}]}]}]}`, "must be a JSON object"},
		{"error with text", `{"iterations":[{"turns":[{"text":"x","error":{"status":529}}]}]}`, "cannot also have"},
		{"error status not error", `{"iterations":[{"turns":[{"error":{"status":200}}]}]}`, "not an HTTP error"},
		{"usage limit without claim", `{"iterations":[{"turns":[{"error":{"status":429,"usage_limit":{"resets_at":1}}}]}]}`, "needs a claim"},
		{"bad duration", `{"iterations":[{"turns":[{"text":"x","delay":"soon"}]}]}`, "invalid duration"},
		{"negative delay", `{"iterations":[{"turns":[{"text":"x","delay":-1}]}]}`, "negative delay"},
		{"second iteration reported", `{"iterations":[{"turns":[{"text":"x"}]},{"turns":[{}]}]}`, "iteration 1 turn 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{`"250ms"`, 250 * time.Millisecond},
		{`"1h30m"`, 90 * time.Minute},
		{`2`, 2 * time.Second},
		{`0.5`, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		var d Duration
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if time.Duration(d) != tt.want {
			t.Errorf("%s = %v, want %v", tt.in, time.Duration(d), tt.want)
		}
		// A script built in Go and saved must load back the same.
		out, _ := json.Marshal(d)
		var back Duration
		if err := json.Unmarshal(out, &back); err != nil || back != d {
			t.Errorf("round trip of %v via %s = %v, %v", tt.want, out, time.Duration(back), err)
		}
	}
}

func TestHelpersBuildValidTurns(t *testing.T) {
	reset := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	s := Script{Iterations: []Iteration{{Turns: []Turn{
		ToolTurn("Writing.", "Write", map[string]string{"file_path": "a", "content": "b"}),
		TextTurn("done"),
		ErrorTurn(529, ""),
		UsageLimitTurn("seven_day", reset),
	}}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	turns := s.Iterations[0].Turns
	if got := string(turns[0].ToolUses[0].Input); got != `{"content":"b","file_path":"a"}` {
		t.Errorf("tool input = %s", got)
	}
	if u := turns[3].Error.UsageLimit; u.Claim != "seven_day" || u.ResetsAt != reset.Unix() {
		t.Errorf("usage limit = %+v", u)
	}
	// A Go-built script must survive the JSON form the demo and testscript use.
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseScript(data); err != nil {
		t.Errorf("ParseScript(json.Marshal(script)): %v\n%s", err, data)
	}
}

func TestToolTurnPanicsOnUnencodableInput(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	ToolTurn("", "Bash", map[string]any{"command": make(chan int)})
}
