package breaker

import (
	"errors"
	"fmt"
)

// Validate reports values that this package never writes, so a torn or
// hand-edited .circuit_breaker_state is noticed instead of trusted. It is
// deliberately lenient where files written by the bash version of Ralph
// differ (no reason_code on an open breaker, counters without a signature,
// no opened_at): those load and behave sensibly.
//
// Relations with the thresholds (a CLOSED breaker holding more strikes than
// the current NoProgress) are not errors: the thresholds may have changed
// since the file was written, and the next step applies the new ones.
func (s State) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if !s.Status.valid() {
		bad("state %q is not CLOSED, HALF_OPEN or OPEN", s.Status)
	}
	if s.Reason != "" && !s.Reason.valid() {
		bad("reason_code %q is unknown", s.Reason)
	}
	if s.Reason != "" && s.Status != Open {
		bad("reason_code %q on a breaker that is %s, not OPEN", s.Reason, s.Status)
	}
	if s.Trial && s.Status != HalfOpen {
		bad("trial set on a breaker that is %s, not HALF_OPEN", s.Status)
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"total_opens", s.TotalOpens},
		{"current_loop", s.CurrentLoop},
		{"last_progress_loop", s.LastProgressLoop},
		{"consecutive_no_progress", s.NoProgress},
		{"consecutive_same_error", s.SameError},
		{"consecutive_permission_denials", s.PermissionDenials},
		{"consecutive_failures", s.Failures},
	} {
		if c.v < 0 {
			bad("%s is negative (%d)", c.name, c.v)
		}
	}
	if s.Status == Open && s.TotalOpens == 0 {
		bad("breaker is OPEN but total_opens is 0")
	}
	if s.ErrorSignature != "" && s.SameError == 0 {
		bad("error_signature set without a same-error streak")
	}
	if len(s.ErrorSample) > 0 && s.ErrorSignature == "" {
		bad("error_sample set without an error_signature")
	}
	if len(s.DeniedTools) > 0 && s.PermissionDenials == 0 {
		bad("denied_tools set without a permission-denial streak")
	}
	if len(s.OutputSizes) > DeclineWindow {
		bad("recent_output_bytes holds %d sizes, at most %d are kept", len(s.OutputSizes), DeclineWindow)
	}
	for _, v := range s.OutputSizes {
		if v <= 0 {
			bad("recent_output_bytes holds %d; only positive sizes are kept", v)
			break
		}
	}
	if len(s.History) > HistoryLimit {
		bad("history holds %d transitions, at most %d are kept", len(s.History), HistoryLimit)
	}
	for i, t := range s.History {
		if !t.From.valid() || !t.To.valid() {
			bad("history[%d]: transition %q → %q between unknown states", i, t.From, t.To)
		}
		if t.Reason != "" && !t.Reason.valid() {
			bad("history[%d]: reason_code %q is unknown", i, t.Reason)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("circuit breaker state: %w", err)
	}
	return nil
}
