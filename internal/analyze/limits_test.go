package analyze

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestMatchLimit(t *testing.T) {
	cases := []struct {
		line string
		kind string // "" = not a limit
	}{
		{"Claude AI usage limit reached|1755615600", LimitUnknown},
		{"5-hour limit reached ∙ resets 9pm", LimitFiveHour},
		{"You've hit your limit · resets 4:50am (Europe/Rome)", LimitUnknown},
		{"You've hit your 5-hour limit · resets 12am (UTC)", LimitFiveHour},
		{"You've hit your weekly limit · resets Nov 23, 11:01pm (UTC)", LimitWeekly},
		{"You've hit your session limit · resets 3pm", LimitSession},
		{"You're out of extra usage · resets 9pm", LimitUnknown},
		{"You’ve hit your usage limit. Upgrade to Pro or try again at Nov 21st, 2026 1:05 AM.", LimitUnknown},
		{"Error: You've hit your Opus limit · resets 5pm", LimitWeekly},
		{"API Error: Request rejected (429) · This request would exceed your account's rate limit.", LimitUnknown},
		{`[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}]`, LimitUnknown},
		{"You exceeded your current quota, please check your plan and billing details.", LimitUnknown},
		// not limits
		{"API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.", ""},
		{"The docs say: You've hit your limit · resets 9pm", ""},
		{"I added a usage limit check to the API.", ""},
		{"Command timed out after 15 minutes", ""},
		{"rate limit: 100 calls per hour", ""},
	}
	for _, tc := range cases {
		kind, ok := matchLimit(tc.line)
		if (tc.kind != "") != ok || kind != tc.kind {
			t.Errorf("matchLimit(%q) = %q, %v; want %q", tc.line, kind, ok, tc.kind)
		}
	}
}

func TestParseReset(t *testing.T) {
	now := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	cases := []struct {
		msg  string
		want string // RFC3339, "" = no reset time
		note bool
	}{
		{"Claude AI usage limit reached|1755615600", "2025-08-19T15:00:00Z", false},
		{"resets 12am (UTC)", "2026-11-21T00:00:00Z", false},
		{"resets 9pm", "2026-11-20T21:00:00Z", false},
		{"resets 8pm", "2026-11-21T20:00:00Z", false}, // exactly now: the next one
		{"resets 4:50am (Europe/Rome)", "2026-11-21T03:50:00Z", false},
		{"resets 11:30pm (America/New_York)", "2026-11-21T04:30:00Z", false},
		{"resets 9pm (PST)", "2026-11-21T05:00:00Z", false},
		{"resets 9pm (UTC+2)", "2026-11-21T19:00:00Z", false}, // 21:00+02:00 today was 19:00Z, already past
		{"resets Nov 23, 11:01pm (UTC)", "2026-11-23T23:01:00Z", false},
		{"resets Jan 2, 9am (UTC)", "2027-01-02T09:00:00Z", false},
		{"try again at Nov 21st, 2026 1:05 AM.", "2026-11-21T01:05:00Z", false},
		{"try again at 3:05 PM", "2026-11-21T15:05:00Z", false},
		{"resets in 2h 30m", "2026-11-20T22:30:00Z", false},
		{"Please retry in 35.5s.", "2026-11-20T20:00:35Z", false},
		{`"retryDelay": "40s"`, "2026-11-20T20:00:40Z", false},
		{"resets 9pm (Mars/Olympus)", "2026-11-20T21:00:00Z", true},
		{"resets soon", "", false},
		{"retry 3 times", "", false},
		{"resets 25:00", "", false},
	}
	for _, tc := range cases {
		got, ok, note := parseReset(tc.msg, now)
		s := ""
		if ok {
			s = got.Format(time.RFC3339)
		}
		if s != tc.want || (note != "") != tc.note {
			t.Errorf("parseReset(%q) = %q (note %q), want %q (note %v)", tc.msg, s, note, tc.want, tc.note)
		}
	}
}

func TestParseResetDaylightSaving(t *testing.T) {
	// The day after now crosses the end of daylight saving in New York: the
	// wall-clock 9am must stay 9am local.
	now := time.Date(2026, 11, 1, 14, 0, 0, 0, time.UTC) // 9:00 EST after the switch
	got, ok, _ := parseReset("resets 9am (America/New_York)", now)
	if !ok || got.Format(time.RFC3339) != "2026-11-02T14:00:00Z" {
		t.Errorf("got %v %v, want 2026-11-02T14:00:00Z", got, ok)
	}
}

// The Gemini CLI prints warnings, retry notices and a stack trace before its
// JSON error report on stderr; the report at the end is what counts.
func TestStderrTrailingErrorObject(t *testing.T) {
	stderr, err := os.ReadFile("testdata/samples/gemini_json_429.stderr")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 1, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		stderr    []byte
		wantLimit bool
		wantSess  string
	}{
		{"verbatim Gemini 429", stderr, true, "250f24df-96b9-4fd0-a73c-2a591896e2d7"},
		{"object alone", []byte(`{"session_id":"s","error":{"message":"Please retry in 20s.","code":429}}`), true, "s"},
		{"braces in a stack trace only", []byte("Error: x\n{\n  cause: {\n    code: 500\n  }\n}\n"), false, ""},
		{"no object", []byte("warning: something\n"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exit := 1 // not 173: that status alone says "quota exhausted"
			if tt.wantLimit {
				exit = 173
			}
			a, err := Analyze(strings.NewReader(""), Options{ExitCode: exit, Now: now, Stderr: tt.stderr})
			if err != nil {
				t.Fatal(err)
			}
			if a.UsageLimit.Detected != tt.wantLimit || a.SessionID != tt.wantSess {
				t.Errorf("usage limit %+v, session %q; want limit %v, session %q", a.UsageLimit, a.SessionID, tt.wantLimit, tt.wantSess)
			}
			if tt.wantLimit && (!a.IsError || a.UsageLimit.ResetsAt != "2026-11-21T01:00:20Z") {
				t.Errorf("is_error %v, resets at %q", a.IsError, a.UsageLimit.ResetsAt)
			}
		})
	}
}
