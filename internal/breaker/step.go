package breaker

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// class is the one bucket an iteration falls into; see the package doc.
type class int

const (
	stalled class = iota
	productive
	failure
	questionsOnly
)

func classify(o Observation) class {
	switch {
	case o.Blocked:
		return stalled
	case o.Progress:
		return productive
	case o.AgentFailed || o.TimedOut:
		return failure
	case o.OnlyQuestions:
		return questionsOnly
	}
	return stalled
}

// Step folds one iteration into the state and says whether the loop may go
// on. It is pure: s is not modified, and the same inputs give the same
// result. An observation made while the breaker is OPEN is ignored (the
// engine should not have run the agent); the decision repeats the halt.
func (s State) Step(obs Observation, th Thresholds) (State, Decision) {
	n := s.clone()
	if !n.Status.valid() {
		n.Status = Closed // Validate reports this; stepping on stays safe
	}
	from := n.Status
	if from == Open {
		return n, n.decision(from, th)
	}
	n.CurrentLoop = obs.Loop
	c := classify(obs)
	size := max(obs.OutputBytes, 0)
	declined := c == stalled && declines(n.OutputSizes, size, th.OutputDeclinePercent)
	if c != questionsOnly && size > 0 {
		n.OutputSizes = append(n.OutputSizes, size)
		if k := len(n.OutputSizes) - DeclineWindow; k > 0 {
			n.OutputSizes = append(n.OutputSizes[:0:0], n.OutputSizes[k:]...)
		}
	}

	recovering := from == HalfOpen && c == productive
	if recovering && !n.Trial {
		// Recovery forgets the streaks that led here; this iteration's own
		// errors and denials are folded in below and start new ones. A
		// trial keeps them: it probes whether the cause of the opening is
		// gone, and the same error again (with edits, as a thrashing agent
		// makes) says it is not.
		n.SameError, n.ErrorSignature, n.ErrorSample = 0, "", nil
		n.PermissionDenials, n.DeniedTools = 0, nil
	}
	strikesBefore := n.NoProgress
	switch c {
	case productive:
		n.NoProgress, n.Failures, n.BlockedReason = 0, 0, ""
		n.LastProgressLoop = obs.Loop
	case failure:
		n.Failures++
	case questionsOnly:
		n.Failures = 0
	case stalled:
		n.Failures = 0
		n.NoProgress++
		if declined {
			n.NoProgress++
		}
		// The last stated reason is kept through the streak: a later
		// "BLOCKED" without one, or an idle iteration, does not erase it.
		if why := clip(strings.TrimSpace(obs.BlockedReason)); obs.Blocked && why != "" {
			n.BlockedReason = why
		}
	}
	n.foldErrors(obs.Errors)
	n.foldDenials(obs)

	reason, msg := n.trip(obs, c, declined, strikesBefore, th)
	if reason == "" && from == HalfOpen && n.Trial && (c == stalled || c == failure) {
		reason, msg = n.trialFailed(obs, c, declined)
	}
	switch {
	case reason != "":
		n.record(obs.At, obs.Loop, Open, reason, msg)
	case recovering:
		n.record(obs.At, obs.Loop, Closed, "", "progress detected; circuit recovered")
	case from == Closed && c == stalled && th.NoProgress > 0 && n.NoProgress >= 2:
		n.record(obs.At, obs.Loop, HalfOpen, "",
			fmt.Sprintf("monitoring: %d no-progress strikes in a row", n.NoProgress))
	}
	return n, n.decision(from, th)
}

// trip applies the opening rules in priority order (package doc).
func (n *State) trip(obs Observation, c class, declined bool, strikesBefore int, th Thresholds) (Reason, string) {
	switch {
	case th.PermissionDenial > 0 && n.PermissionDenials >= th.PermissionDenial:
		return ReasonPermissionDenied, fmt.Sprintf(
			"permission denied in %d consecutive iterations%s; allow the tools in ALLOWED_TOOLS (.ralphrc) or --allowed-tools",
			n.PermissionDenials, toolList(n.DeniedTools))
	case th.Failure > 0 && n.Failures >= th.Failure:
		return ReasonRepeatedFailures, fmt.Sprintf(
			"the agent failed in %d consecutive iterations%s", n.Failures, timedOutNote(obs))
	case th.SameError > 0 && n.SameError >= th.SameError:
		return ReasonSameError, fmt.Sprintf(
			"the same error in %d consecutive iterations: %s", n.SameError, firstError(obs.Errors))
	case obs.Blocked && obs.GaveUp:
		return ReasonBlocked, fmt.Sprintf("the agent reported BLOCKED and asked to stop%s", reasonNote(n.BlockedReason))
	case c == stalled && th.NoProgress > 0 && n.NoProgress >= th.NoProgress:
		// Only a stalled iteration trips this rule: the strikes a trial keeps
		// from before the cooldown must not trip on a questions-only iteration.
		switch {
		case obs.Blocked:
			return ReasonBlocked, fmt.Sprintf("the agent reported BLOCKED%s; %d no-progress strikes in a row",
				reasonNote(n.BlockedReason), n.NoProgress)
		case declined && strikesBefore+1 < th.NoProgress:
			return ReasonOutputDecline, fmt.Sprintf(
				"output fell more than %d%% below the recent average with no progress; %d no-progress strikes in a row",
				th.OutputDeclinePercent, n.NoProgress)
		default:
			return ReasonNoProgress, fmt.Sprintf("no progress: %d no-progress strikes in a row", n.NoProgress)
		}
	}
	return "", ""
}

// trialFailed names the reopening after a cooldown trial that did not
// produce anything; the reason describes the trial iteration itself.
func (n *State) trialFailed(obs Observation, c class, declined bool) (Reason, string) {
	const after = " in the trial iteration after the cooldown"
	switch {
	case c == failure && obs.TimedOut:
		return ReasonRepeatedFailures, "the agent timed out without progress" + after
	case c == failure:
		return ReasonRepeatedFailures, "the agent failed" + after
	case obs.Blocked:
		return ReasonBlocked, "the agent reported BLOCKED" + reasonNote(n.BlockedReason) + after
	case declined:
		return ReasonOutputDecline, "output declined with no progress" + after
	}
	return ReasonNoProgress, "no progress" + after
}

// OnStart is applied once when a loop starts. With AutoReset any breaker that
// is not closed closes. Otherwise an OPEN breaker whose cooldown has passed
// moves to HALF_OPEN for one trial iteration. An opening time that is unknown
// (old file) or later than now (clock moved back, hand edit) restarts the
// cooldown from now: waiting for an unknown span would be worse.
func (s State) OnStart(now time.Time, th Thresholds) (State, Decision) {
	n := s.clone()
	if !n.Status.valid() {
		n.Status = Closed
	}
	from := n.Status
	switch {
	case th.AutoReset && from != Closed:
		n.clearStreaks()
		n.record(now, n.CurrentLoop, Closed, "", "auto reset on start (CB_AUTO_RESET)")
	case from == Open:
		at := n.openedAt()
		if at.IsZero() || at.After(now) {
			n.OpenedAt, at = now, now
		}
		if cooldown := max(th.Cooldown, 0); !now.Before(at.Add(cooldown)) {
			was := n.Reason
			n.record(now, n.CurrentLoop, HalfOpen, "",
				fmt.Sprintf("cooldown of %s over since it opened%s; trying one iteration", cooldown, reasonNote(string(was))))
			n.Trial = true
		}
	}
	return n, n.decision(from, th)
}

// Reset closes the breaker by hand (ralph --reset-circuit) and forgets all
// streaks and the output baseline; history and totals are kept.
func (s State) Reset(now time.Time, why string) (State, Decision) {
	n := s.clone()
	if !n.Status.valid() {
		n.Status = Closed
	}
	from := n.Status
	if why = strings.TrimSpace(why); why == "" {
		why = "manual reset"
	}
	n.clearStreaks()
	n.record(now, n.CurrentLoop, Closed, "", why)
	return n, n.decision(from, Thresholds{})
}

func (n *State) clearStreaks() {
	n.NoProgress, n.SameError, n.PermissionDenials, n.Failures = 0, 0, 0, 0
	n.ErrorSignature, n.ErrorSample, n.DeniedTools, n.BlockedReason = "", nil, nil, ""
	n.OutputSizes = nil
}

func (n *State) foldErrors(lines []string) {
	sig, norm := Signature(lines)
	switch {
	case sig == "":
		n.SameError, n.ErrorSignature, n.ErrorSample = 0, "", nil
	case sig == n.ErrorSignature:
		n.SameError++
	default:
		n.SameError, n.ErrorSignature = 1, sig
		n.ErrorSample = nil
		for _, l := range norm[:min(len(norm), maxSampleLines)] {
			n.ErrorSample = append(n.ErrorSample, clip(l))
		}
		if len(norm) > 0 {
			n.ErrorHistory = append(n.ErrorHistory, clip(norm[0]))
			if k := len(n.ErrorHistory) - ErrorHistoryKeep; k > 0 {
				n.ErrorHistory = slices.Clone(n.ErrorHistory[k:])
			}
		}
	}
}

// ErrorHistoryKeep is how many distinct errors State.ErrorHistory keeps.
const ErrorHistoryKeep = 5

func (n *State) foldDenials(obs Observation) {
	if !obs.PermissionDenied && len(obs.DeniedTools) == 0 {
		n.PermissionDenials, n.DeniedTools = 0, nil
		return
	}
	n.PermissionDenials++
	for _, t := range obs.DeniedTools {
		if t = clip(strings.TrimSpace(t)); t != "" && !slices.Contains(n.DeniedTools, t) {
			n.DeniedTools = append(n.DeniedTools, t)
		}
	}
	slices.Sort(n.DeniedTools)
	// Keep the first ones in sort order: which ones are dropped must not
	// depend on the order the iterations happened to report them.
	n.DeniedTools = n.DeniedTools[:min(len(n.DeniedTools), maxDeniedTools)]
}

// declines applies the output-decline rule (package doc) in integers so the
// result never depends on rounding.
func declines(sizes []int, size, pct int) bool {
	if pct <= 0 || pct >= 100 {
		return false
	}
	if len(sizes) > DeclineWindow {
		sizes = sizes[len(sizes)-DeclineWindow:]
	}
	var sum, k int64
	for _, v := range sizes {
		if v > 0 {
			sum += min(int64(v), 1<<40) // a hand-edited size must not overflow
			k++
		}
	}
	if k == 0 {
		return false
	}
	return min(int64(size), 1<<40)*100*k < sum*int64(100-pct)
}

func clip(s string) string {
	if len(s) <= maxLineLen {
		return s
	}
	cut := maxLineLen
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func toolList(tools []string) string {
	if len(tools) == 0 {
		return ""
	}
	return " for " + strings.Join(tools, ", ")
}

func timedOutNote(obs Observation) string {
	if obs.TimedOut {
		return " (the last one timed out)"
	}
	return ""
}

func reasonNote(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

func firstError(lines []string) string {
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			return clip(l)
		}
	}
	return ""
}
