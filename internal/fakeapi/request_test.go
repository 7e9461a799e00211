package fakeapi

import (
	"encoding/json"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestMessagesRequestHelpers(t *testing.T) {
	tests := []struct {
		name           string
		body           string
		wantPrompts    []string
		wantToolResult string
		wantConv       int
		wantStateless  [2]int
	}{
		{
			name:          "string content and a system role",
			body:          `{"system":"sys","messages":[{"role":"user","content":"hi"},{"role":"system","content":"env"}]}`,
			wantPrompts:   []string{"hi"},
			wantConv:      1,
			wantStateless: [2]int{0, 0},
		},
		{
			name: "consecutive user messages are one prompt",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"<reminder>"}]},
				{"role":"system","content":"env"},
				{"role":"user","content":[{"type":"text","text":"do it"}]}]}`,
			wantPrompts:   []string{"<reminder>\ndo it"},
			wantConv:      2,
			wantStateless: [2]int{0, 0},
		},
		{
			name: "tool results with nested and string content",
			body: `{"messages":[{"role":"user","content":"go"},
				{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"first"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"b","name":"Read","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","is_error":true,"content":[{"type":"text","text":"denied"}]},{"type":"text","text":"<reminder>"}]}]}`,
			wantPrompts:    []string{"go"},
			wantToolResult: "denied",
			wantConv:       5,
			wantStateless:  [2]int{0, 2},
		},
		{
			name: "a resumed session",
			body: `{"messages":[{"role":"user","content":"one"},
				{"role":"assistant","content":[{"type":"text","text":"done"}]},
				{"role":"user","content":"two"},
				{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"Bash","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"out"}]}]}`,
			wantPrompts:    []string{"one", "two"},
			wantToolResult: "out",
			wantConv:       5,
			wantStateless:  [2]int{1, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mr MessagesRequest
			if err := json.Unmarshal([]byte(tt.body), &mr); err != nil {
				t.Fatal(err)
			}
			if got := mr.Prompts(); !slices.Equal(got, tt.wantPrompts) {
				t.Errorf("Prompts = %q, want %q", got, tt.wantPrompts)
			}
			if got := mr.LastToolResult(); got != tt.wantToolResult {
				t.Errorf("LastToolResult = %q, want %q", got, tt.wantToolResult)
			}
			conv := mr.Conversation()
			if len(conv) != tt.wantConv {
				t.Errorf("Conversation has %d messages, want %d", len(conv), tt.wantConv)
			}
			if i, turn := stateless(conv); [2]int{i, turn} != tt.wantStateless {
				t.Errorf("stateless = %d, %d, want %v", i, turn, tt.wantStateless)
			}
		})
	}
}

func TestChunksKeepRunesWhole(t *testing.T) {
	tests := []struct {
		in string
		n  int
	}{
		{"", 4},
		{"abc", 4},
		{"abcdefghij", 3},
		{"ääääää", 3},
		{"✓✓✓", 2},
	}
	for _, tt := range tests {
		parts := chunks(tt.in, tt.n)
		joined := ""
		for _, p := range parts {
			if !utf8.ValidString(p) {
				t.Errorf("chunks(%q, %d): piece %q is not valid text", tt.in, tt.n, p)
			}
			joined += p
		}
		if joined != tt.in {
			t.Errorf("chunks(%q, %d) = %q", tt.in, tt.n, parts)
		}
	}
}
