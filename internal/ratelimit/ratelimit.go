// Package ratelimit keeps ralph within its call and token budgets per
// sliding hour and works out how long to wait after an agent's usage limit.
//
// It is a pure decision core: no clock reads (every method takes now), no
// I/O. The [State] is JSON-serialisable and is persisted by the store
// package, so the budget survives restarts: ralph stopped and started again
// within the hour still counts the calls it already made.
//
// # Sliding window
//
// A call made at t counts while now - t < [Window], i.e. it leaves the
// window at exactly t + Window. When the budget is exhausted, [Limiter.Allow]
// answers with the instant at which enough of the oldest calls have left for
// one more call to fit; asking again at that instant is allowed. Unlike the
// bash tool's counter that reset on the hour, this never lets 2×N calls
// through around an hour boundary.
//
// # Clock going backwards
//
// Calls stamped later than now (the clock was set back, or a state file came
// from another machine) are treated as made now: they still count, and they
// leave the window one Window from now. [Limiter.Record] rewrites such stamps
// to now, so a clock set back by a day costs at most one window of waiting
// instead of a day.
package ratelimit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Window is the span over which calls and tokens are counted.
const Window = time.Hour

// DefaultMaxCallsPerHour is MAX_CALLS_PER_HOUR's default.
const DefaultMaxCallsPerHour = 100

// Limits are the budgets per Window; 0 means no limit.
type Limits struct {
	MaxCallsPerHour  int   // MAX_CALLS_PER_HOUR
	MaxTokensPerHour int64 // MAX_TOKENS_PER_HOUR (0 = off, the default)
}

// DefaultLimits are 100 calls per hour and no token limit.
func DefaultLimits() Limits { return Limits{MaxCallsPerHour: DefaultMaxCallsPerHour} }

// Validate reports negative budgets.
func (l Limits) Validate() error {
	var errs []error
	if l.MaxCallsPerHour < 0 {
		errs = append(errs, fmt.Errorf("max calls per hour %d is negative", l.MaxCallsPerHour))
	}
	if l.MaxTokensPerHour < 0 {
		errs = append(errs, fmt.Errorf("max tokens per hour %d is negative", l.MaxTokensPerHour))
	}
	return errors.Join(errs...)
}

// Call is one agent call in the window.
type Call struct {
	At     time.Time `json:"at"`
	Tokens int64     `json:"tokens,omitempty"` // input + output tokens, when known
}

// State is the persisted form: the calls of the last Window, oldest first.
type State struct {
	Calls []Call `json:"calls"`
}

// Validate reports entries this package never writes, so a torn or
// hand-edited file is noticed instead of trusted. Order is not checked:
// [New] sorts.
func (s State) Validate() error {
	var errs []error
	for i, c := range s.Calls {
		if c.At.IsZero() {
			errs = append(errs, fmt.Errorf("calls[%d]: no time", i))
		}
		if c.Tokens < 0 {
			errs = append(errs, fmt.Errorf("calls[%d]: negative token count %d", i, c.Tokens))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rate limit state: %w", err)
	}
	return nil
}

// FromLegacy converts the bash tool's .call_count and .last_reset files: it
// counted calls since its last hourly reset, so the calls are placed at that
// reset and leave the window when the bash tool would have reset its count.
func FromLegacy(count int, lastReset time.Time) State {
	var s State
	for range min(max(count, 0), 100_000) {
		s.Calls = append(s.Calls, Call{At: lastReset})
	}
	return s
}

// Limiter applies Limits to a State. It is not safe for concurrent use: the
// engine is its only user. Queries do not modify it; only Record does.
type Limiter struct {
	limits Limits
	calls  []Call
}

// New starts a limiter from persisted state (which it copies and sorts).
// Limits come from the current configuration, never from the state file.
func New(l Limits, s State) *Limiter {
	calls := slices.Clone(s.Calls)
	slices.SortStableFunc(calls, func(a, b Call) int { return a.At.Compare(b.At) })
	return &Limiter{limits: l, calls: calls}
}

// Limits returns the budgets in force.
func (l *Limiter) Limits() Limits { return l.limits }

// State is a copy of the calls for persisting.
func (l *Limiter) State() State { return State{Calls: slices.Clone(l.calls)} }

// Allow reports whether a call may start now. When it may not, waitUntil is
// the instant the oldest calls holding up the budget leave the window;
// when it may, waitUntil is now.
func (l *Limiter) Allow(now time.Time) (ok bool, waitUntil time.Time) {
	in := l.window(now)
	var until time.Time
	if m := l.limits.MaxCallsPerHour; m > 0 && len(in) >= m {
		// len(in)-m+1 calls must leave; the last of them is in[len(in)-m].
		until = leaves(in[len(in)-m], now)
	}
	if m := l.limits.MaxTokensPerHour; m > 0 {
		// Walk back from the newest call while the suffix stays under the
		// budget; the call that would push it over, and all older ones,
		// must leave first. Comparing t >= m-s avoids overflow.
		j, s := len(in), int64(0)
		for ; j > 0; j-- {
			t := max(in[j-1].Tokens, 0)
			if t >= m-s {
				break
			}
			s += t
		}
		if j > 0 {
			if t := leaves(in[j-1], now); t.After(until) {
				until = t
			}
		}
	}
	if until.IsZero() {
		return true, now
	}
	return false, until
}

// NextFree is when the next call may start: now if it may start now.
func (l *Limiter) NextFree(now time.Time) time.Time {
	_, t := l.Allow(now)
	return t
}

// CallsInWindow is the number of calls counted at now.
func (l *Limiter) CallsInWindow(now time.Time) int { return len(l.window(now)) }

// TokensInWindow is the number of tokens counted at now.
func (l *Limiter) TokensInWindow(now time.Time) int64 { return sumTokens(l.window(now)) }

// Record counts a call made at now that used tokens (0 when unknown). It
// drops calls that left the window and pulls stamps later than now back to
// now (package doc), so the state stays sorted and bounded by one window.
func (l *Limiter) Record(now time.Time, tokens int64) {
	l.Prune(now)
	l.calls = append(l.calls, Call{At: now, Tokens: max(tokens, 0)})
}

// Prune drops calls that left the window and pulls future stamps back to
// now. Record prunes; call Prune before persisting a limiter that was only
// queried.
func (l *Limiter) Prune(now time.Time) {
	start := l.start(now)
	l.calls = append(l.calls[:0], l.calls[start:]...)
	for i := len(l.calls) - 1; i >= 0 && l.calls[i].At.After(now); i-- {
		l.calls[i].At = now
	}
}

// window is the calls counted at now, oldest first.
func (l *Limiter) window(now time.Time) []Call { return l.calls[l.start(now):] }

// start is the index of the first call still in the window at now.
func (l *Limiter) start(now time.Time) int {
	cut := now.Add(-Window)
	return sort.Search(len(l.calls), func(i int) bool { return l.calls[i].At.After(cut) })
}

// leaves is when c stops counting, reading a future stamp as now.
func leaves(c Call, now time.Time) time.Time {
	if c.At.After(now) {
		return now.Add(Window)
	}
	return c.At.Add(Window)
}

// sumTokens saturates instead of wrapping: a hand-edited count near the
// int64 limit must read as "over budget", not as a negative total.
func sumTokens(calls []Call) int64 {
	var n int64
	for _, c := range calls {
		if t := max(c.Tokens, 0); n > math.MaxInt64-t {
			n = math.MaxInt64
		} else {
			n += t
		}
	}
	return n
}
