package ratelimit

import "time"

// Usage-limit waits.
const (
	// DefaultUsageWait is how long to wait when the agent hit its usage limit
	// but said nothing usable about when it resets.
	DefaultUsageWait = 60 * time.Minute
	// DefaultUsageMargin is added to a reset time: reset times are often
	// given to the minute ("resets 5pm"), and a call a second early fails.
	DefaultUsageMargin = time.Minute
	// MaxUsageWait bounds a believable reset time. The longest real limit
	// (weekly) resets within 7 days; anything past 8 days is a misread time
	// (wrong year, milliseconds taken as seconds, a date in another zone).
	MaxUsageWait = 8 * 24 * time.Hour
)

// UsageLimitWait is the instant to resume after the agent reported a usage
// limit at now:
//
//   - a reset time ahead of now and at most MaxUsageWait away: that time plus
//     margin;
//   - a reset time at or before now (the limit has already lifted, or clocks
//     disagree): now plus margin only;
//   - no reset time (hasReset false or a zero time): now plus defaultWait;
//   - a reset time more than MaxUsageWait ahead: treated as no reset time,
//     so the wait is capped at now plus defaultWait. Trusting a misread
//     time could stall the loop for weeks; retrying after the default wait
//     costs one rejected call and yields a fresh reading.
//
// A defaultWait of 0 or less means DefaultUsageWait; a negative margin means
// none. Callers that want the usual margin pass DefaultUsageMargin.
func UsageLimitWait(now, resetsAt time.Time, hasReset bool, defaultWait, margin time.Duration) time.Time {
	if defaultWait <= 0 {
		defaultWait = DefaultUsageWait
	}
	margin = max(margin, 0)
	switch {
	case !hasReset || resetsAt.IsZero():
		return now.Add(defaultWait)
	case !resetsAt.After(now):
		return now.Add(margin)
	case resetsAt.Sub(now) > MaxUsageWait:
		return now.Add(defaultWait)
	}
	return resetsAt.Add(margin)
}
