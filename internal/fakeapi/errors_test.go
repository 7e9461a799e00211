package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestErrorReplies(t *testing.T) {
	now := time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)
	reset := time.Date(2026, 11, 21, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		turn        Turn
		wantStatus  int
		wantType    string
		wantMessage string
		wantHeaders map[string]string
		noHeaders   []string
	}{
		{
			name:       "five-hour usage limit",
			turn:       UsageLimitTurn("five_hour", reset),
			wantStatus: 429, wantType: "rate_limit_error", wantMessage: "rate limit",
			wantHeaders: map[string]string{
				"anthropic-ratelimit-unified-status":               "rejected",
				"anthropic-ratelimit-unified-reset":                fmt.Sprint(reset.Unix()),
				"anthropic-ratelimit-unified-representative-claim": "five_hour",
				"anthropic-ratelimit-unified-5h-status":            "rejected",
				"anthropic-ratelimit-unified-5h-reset":             fmt.Sprint(reset.Unix()),
				"retry-after":                                      "18000",
			},
		},
		{
			name:       "weekly limit relative to the clock",
			turn:       Turn{Error: &ErrorReply{Status: 429, UsageLimit: &UsageLimit{Claim: "seven_day", ResetsIn: Duration(3 * time.Hour)}}},
			wantStatus: 429, wantType: "rate_limit_error",
			wantHeaders: map[string]string{
				"anthropic-ratelimit-unified-representative-claim": "seven_day",
				"anthropic-ratelimit-unified-reset":                fmt.Sprint(now.Add(3 * time.Hour).Unix()),
				"anthropic-ratelimit-unified-7d-status":            "rejected",
				"retry-after":                                      "10800",
			},
		},
		{
			name:       "overloaded",
			turn:       ErrorTurn(529, ""),
			wantStatus: 529, wantType: "overloaded_error", wantMessage: "Overloaded",
			noHeaders: []string{"anthropic-ratelimit-unified-status", "retry-after"},
		},
		{
			name:       "plain rate limit with scripted headers",
			turn:       Turn{Error: &ErrorReply{Status: 429, Message: "slow down", Headers: map[string]string{"retry-after": "30"}}},
			wantStatus: 429, wantType: "rate_limit_error", wantMessage: "slow down",
			wantHeaders: map[string]string{"retry-after": "30"},
			noHeaders:   []string{"anthropic-ratelimit-unified-status"},
		},
		{
			name:       "explicit type wins",
			turn:       Turn{Error: &ErrorReply{Status: 400, Type: "invalid_request_error", Message: "prompt is too long"}},
			wantStatus: 400, wantType: "invalid_request_error", wantMessage: "prompt is too long",
		},
		{
			name:       "unauthorised",
			turn:       ErrorTurn(401, ""),
			wantStatus: 401, wantType: "authentication_error", wantMessage: "invalid x-api-key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{tt.turn}}}}, WithClock(func() time.Time { return now }))
			// Errors are plain JSON even when the client asked for a stream.
			resp, raw := post(t, s.URL, "/v1/messages?beta=true", messagesBody(true, freshPrompt("hi")))
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %q, want %d json", resp.StatusCode, resp.Header.Get("Content-Type"), tt.wantStatus)
			}
			var body struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("%v: %s", err, raw)
			}
			if body.Type != "error" || body.Error.Type != tt.wantType || !strings.Contains(body.Error.Message, tt.wantMessage) {
				t.Errorf("body = %s", raw)
			}
			if body.RequestID == "" || body.RequestID != resp.Header.Get("request-id") {
				t.Errorf("request id %q vs header %q", body.RequestID, resp.Header.Get("request-id"))
			}
			for k, v := range tt.wantHeaders {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			for _, k := range tt.noHeaders {
				if got := resp.Header.Get(k); got != "" {
					t.Errorf("header %s = %q, want none", k, got)
				}
			}
		})
	}
}

func TestOtherRoutes(t *testing.T) {
	s := Start(t, Script{})
	tests := []struct {
		method, path, body string
		wantStatus         int
		wantBody           string
	}{
		{"HEAD", "/", "", 200, ""},
		{"HEAD", "/api/hello", "", 200, ""},
		{"GET", "/api/hello", "", 200, ""},
		{"GET", "/v1/models", "", 404, "not_found_error"},
		{"POST", "/v1/messages/count_tokens", `{"messages":[]}`, 200, `"input_tokens":`},
		{"POST", "/v1/messages", `{not json`, 400, "invalid_request_error"},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, s.URL+tt.path, strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		got := readAll(t, resp)
		if resp.StatusCode != tt.wantStatus || !strings.Contains(got, tt.wantBody) {
			t.Errorf("%s %s = %d %q, want %d containing %q", tt.method, tt.path, resp.StatusCode, got, tt.wantStatus, tt.wantBody)
		}
	}
	if got := len(s.Requests()); got != len(tests) {
		t.Errorf("recorded %d requests, want %d", got, len(tests))
	}
	if p := s.Problems(); len(p) != 1 || !strings.Contains(p[0], "undecodable") {
		t.Errorf("problems = %q", p)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
