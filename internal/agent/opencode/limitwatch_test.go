package opencode

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"ralph/internal/agent/agenttest"
)

// The provider's message in the recorded 429 log.
const recordedLimit = "This request would exceed your account's rate limit. Please try again later."

func sampleLines(t *testing.T, name string) []string {
	t.Helper()
	return strings.Split(strings.TrimRight(string(agenttest.Sample(t, name)), "\n"), "\n")
}

// logLine is the first line of the recorded 429 log whose message is msg.
func logLine(t *testing.T, msg string) string {
	t.Helper()
	for _, l := range sampleLines(t, "opencode_run_print_logs_429.stderr") {
		if v, _ := logValue(l, "message"); v == msg {
			return l
		}
	}
	t.Fatalf("no %q line in the recorded log", msg)
	return ""
}

// TestLimitWatch feeds recorded log lines, one a second, and reports
// whether the watch asked for a stop and how long after the last limit
// error it did.
func TestLimitWatch(t *testing.T) {
	limit, stream, loop := logLine(t, "stream error"), logLine(t, "stream"), logLine(t, "loop")
	overloaded := strings.Replace(limit, recordedLimit, "Overloaded", 1)
	quota := strings.Replace(limit, recordedLimit, "You exceeded your current quota, please check your plan and billing details.", 1)
	const quiet = 10 * time.Second
	tests := []struct {
		name  string
		lines []string
		// wantAfter is how long after the last limit error the stop
		// comes; -1 for no stop.
		wantAfter time.Duration
	}{
		{"the real 429: silence after the error", sampleLines(t, "opencode_run_print_logs_429.stderr"), quiet},
		{"the real success", sampleLines(t, "opencode_run_print_logs_success.stderr"), -1},
		{"retried within the quiet window", []string{limit, stream}, -1},
		{"retried, then silence", []string{limit, stream, limit}, quiet},
		{"third limit error in a row", []string{limit, stream, limit, stream, limit, stream}, 0},
		{"a step got through in between", []string{limit, stream, loop, limit, stream, loop, limit, stream}, -1},
		{"another provider's wording", []string{quota}, quiet},
		{"overloaded is no limit", []string{overloaded}, -1},
		{"not OpenCode's log", []string{"Error: " + recordedLimit}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newLimitWatch(quiet)
				var lastLimit time.Time
				for _, l := range tt.lines {
					w.line([]byte(l))
					if v, _ := logValue(l, "message"); v == "stream error" {
						lastLimit = time.Now()
					}
					select {
					case reason := <-w.abort:
						check(t, reason, time.Since(lastLimit), tt.wantAfter)
						return
					default:
					}
					time.Sleep(time.Second)
				}
				select {
				case reason := <-w.abort:
					check(t, reason, time.Since(lastLimit), tt.wantAfter)
				case <-time.After(time.Hour):
					if tt.wantAfter >= 0 {
						t.Errorf("no stop, want one %v after the limit error", tt.wantAfter)
					}
				}
				w.done()
			})
		})
	}
}

func check(t *testing.T, reason string, after, want time.Duration) {
	t.Helper()
	if want < 0 {
		t.Errorf("stopped (%q), want no stop", reason)
		return
	}
	if after != want || !strings.HasPrefix(reason, "rate limit: ") || strings.Contains(reason, "AI_APICallError") {
		t.Errorf("stopped %v after the limit error with %q, want %v", after, reason, want)
	}
}

// TestLimitWatchRealReason: the reason carries the provider's message.
func TestLimitWatchRealReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newLimitWatch(time.Second)
		w.line([]byte(logLine(t, "stream error")))
		if got := <-w.abort; got != "rate limit: "+recordedLimit {
			t.Errorf("reason %q", got)
		}
		// Nothing more is sent, whatever comes.
		w.line([]byte(logLine(t, "stream error")))
		time.Sleep(time.Minute)
		w.done()
		select {
		case r := <-w.abort:
			t.Errorf("second reason %q", r)
		default:
		}
	})
}

func TestLogValue(t *testing.T) {
	line := `timestamp=2026-11-21T02:07:50.046Z level=ERROR message="stream error" session.id=ses_1 id=x title="a \"quoted\" id=y" error.error="AI_APICallError: slow down" tail="cut`
	tests := []struct{ key, want string }{
		{"level", "ERROR"},
		{"message", "stream error"},
		{"id", "x"},
		{"session.id", "ses_1"},
		{"title", `a "quoted" id=y`},
		{"error.error", "AI_APICallError: slow down"},
		{"tail", "cut"},
	}
	for _, tt := range tests {
		if got, ok := logValue(line, tt.key); !ok || got != tt.want {
			t.Errorf("%s = %q, %v; want %q", tt.key, got, ok, tt.want)
		}
	}
	if _, ok := logValue(line, "missing"); ok {
		t.Error("missing key found")
	}
	if got := streamError(line); got != "slow down" {
		t.Errorf("streamError = %q", got)
	}
}
