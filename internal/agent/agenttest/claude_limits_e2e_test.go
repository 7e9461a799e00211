package agenttest

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/fakeapi"
)

// TestClaudeUsageLimitReporting records how Claude Code reports a rejected
// request. The finding ralph depends on: only subscription auth (an OAuth
// token) turns the unified rate-limit headers into "You've hit your ...
// limit · resets ..." and, in stream-json, a rate_limit_event carrying the
// reset epoch; with an API key the same reply is a generic 429.
func TestClaudeUsageLimitReporting(t *testing.T) {
	bin := ClaudeBinary(t)
	// Whole hours a little ahead, so the CLI prints a time without minutes
	// and the expected text can be computed (TZ is UTC).
	now := time.Now().UTC()
	fiveHour := now.Truncate(time.Hour).Add(3 * time.Hour)
	weekly := now.Truncate(time.Hour).Add(3 * 24 * time.Hour)

	tests := []struct {
		name       string
		oauth      bool
		stream     bool
		turn       fakeapi.Turn
		wantStatus int
		wantResult string // exact
		wantPrefix string // or prefix
		wantLimit  bool   // api_error usage_limit_reached
		wantEvent  int64  // resetsAt of a rate_limit_event, 0 for none
		fixture    string
	}{
		{
			name: "api key five-hour json", turn: fakeapi.UsageLimitTurn("five_hour", fiveHour),
			wantStatus: 429, wantPrefix: "API Error: Request rejected (429)",
			fixture: "claude_json_429_unified_headers_apikey.json",
		},
		{
			name: "api key five-hour stream", stream: true, turn: fakeapi.UsageLimitTurn("five_hour", fiveHour),
			wantStatus: 429, wantPrefix: "API Error: Request rejected (429)",
			fixture: "claude_stream_json_429_unified_headers_apikey.jsonl",
		},
		{
			name: "oauth five-hour json", oauth: true, turn: fakeapi.UsageLimitTurn("five_hour", fiveHour),
			wantStatus: 429, wantResult: "You've hit your 5-hour limit · resets " + fiveHour.Format("3pm") + " (UTC)",
			wantLimit: true,
			fixture:   "claude_json_5h_limit_oauth.json",
		},
		{
			name: "oauth five-hour stream", oauth: true, stream: true, turn: fakeapi.UsageLimitTurn("five_hour", fiveHour),
			wantStatus: 429, wantResult: "You've hit your 5-hour limit · resets " + fiveHour.Format("3pm") + " (UTC)",
			wantLimit: true, wantEvent: fiveHour.Unix(),
			fixture: "claude_stream_json_5h_limit_oauth.jsonl",
		},
		{
			name: "oauth weekly json", oauth: true, turn: fakeapi.UsageLimitTurn("seven_day", weekly),
			wantStatus: 429, wantResult: "You've hit your weekly limit · resets " + weekly.Format("Jan 2, 3pm") + " (UTC)",
			wantLimit: true,
			fixture:   "claude_json_weekly_limit_oauth.json",
		},
		{
			name: "oauth overloaded json", oauth: true, turn: fakeapi.ErrorTurn(529, ""),
			wantStatus: 529, wantPrefix: "API Error: 529",
			fixture: "claude_json_529_overloaded_oauth.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fake := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{{Turns: []fakeapi.Turn{tt.turn}}}})
			env := ClaudeEnv(t, fake.URL)
			if tt.oauth {
				env = SetEnv(UnsetEnv(env, "ANTHROPIC_API_KEY"), "CLAUDE_CODE_OAUTH_TOKEN", "dummy-oauth-token")
			}
			args := []string{"-p", "work", "--output-format", "json"}
			if tt.stream {
				args = []string{"-p", "work", "--output-format", "stream-json", "--verbose"}
			}
			res := Run(t, dir, env, claudeTimeout, bin, args...)
			if res.ExitCode != 1 {
				t.Errorf("exit %d, want 1", res.ExitCode)
			}

			var r result
			var events []event
			if tt.stream {
				events, r = parseStream(t, res.Stdout)
			} else {
				r = parseResult(t, res.Stdout)
			}
			if !r.IsError || r.APIErrorStatus == nil || *r.APIErrorStatus != tt.wantStatus {
				t.Errorf("is_error %v, api_error_status %v, want true, %d", r.IsError, r.APIErrorStatus, tt.wantStatus)
			}
			if tt.wantResult != "" && r.text() != tt.wantResult {
				t.Errorf("result %q, want %q", r.text(), tt.wantResult)
			}
			if tt.wantPrefix != "" && !strings.HasPrefix(r.text(), tt.wantPrefix) {
				t.Errorf("result %q, want prefix %q", r.text(), tt.wantPrefix)
			}
			if got := r.APIError == "usage_limit_reached"; got != tt.wantLimit {
				t.Errorf("api_error %q, want usage_limit_reached: %v", r.APIError, tt.wantLimit)
			}
			var resetsAt int64
			for _, e := range events {
				if e.Type == "rate_limit_event" && e.RateLimitInfo != nil {
					resetsAt = e.RateLimitInfo.ResetsAt
					if e.RateLimitInfo.Status != "rejected" || e.RateLimitInfo.RateLimitType != "five_hour" {
						t.Errorf("rate_limit_event = %s", e.raw)
					}
				}
			}
			if resetsAt != tt.wantEvent {
				t.Errorf("rate_limit_event resetsAt = %d, want %d", resetsAt, tt.wantEvent)
			}

			reqs := fake.MessageRequests()
			if len(reqs) != 1 {
				t.Fatalf("fake saw %d message requests, want 1 (retries must be off)", len(reqs))
			}
			h := reqs[0].Header
			if tt.oauth && (h.Get("Authorization") != "Bearer dummy-oauth-token" || h.Get("X-Api-Key") != "") {
				t.Errorf("OAuth request auth headers: Authorization %q, X-Api-Key %q", h.Get("Authorization"), h.Get("X-Api-Key"))
			}
			noProblems(t, fake)
			saveFixture(t, tt.fixture, res.Stdout, dir, fake.URL)
		})
	}
}
