package opencode

import (
	"bytes"
	"strings"
	"time"

	"ralph/internal/analyze"
)

// splitStderr separates OpenCode's own log (--print-logs) from the rest of
// stderr, which the analysis reads as before: the log is chatter at every
// level (a request that is retried logs an ERROR, a plugin install that
// cannot reach npm a WARN), and read as errors it would make a normal run
// look like a failing one. limit is the message ralph noted when it
// stopped the call at a rate limit.
func splitStderr(b []byte) (rest []byte, limit string) {
	if !bytes.Contains(b, []byte("timestamp=")) && !bytes.Contains(b, []byte(limitMarker)) {
		return b, ""
	}
	rest = make([]byte, 0, len(b))
	for line := range bytes.Lines(b) {
		s := strings.TrimRight(string(line), "\r\n")
		switch {
		case strings.HasPrefix(s, limitMarker):
			limit = strings.TrimPrefix(s, limitMarker)
		case isLogLine(s):
		default:
			rest = append(rest, line...)
		}
	}
	return rest, limit
}

func isLogLine(s string) bool {
	return strings.HasPrefix(s, "timestamp=") && strings.Contains(s, " level=")
}

// stoppedLimit is the usage limit of a call ralph stopped. OpenCode's log
// has no retry-after, but the provider's message may name the reset; the
// analyzer knows those wordings.
func stoppedLimit(msg string, now time.Time) (analyze.UsageLimit, bool) {
	an, err := analyze.Analyze(strings.NewReader(""), analyze.Options{Stderr: []byte("Error: " + msg + "\n"), Now: now})
	if err == nil && an.UsageLimit.Detected && an.UsageLimit.ResetsAt != "" {
		return analyze.UsageLimit{Detected: true, Kind: an.UsageLimit.Kind, ResetsAt: an.UsageLimit.ResetsAt, Message: msg}, true
	}
	return analyze.UsageLimit{Detected: true, Kind: analyze.LimitUnknown, Message: msg}, false
}
