// Package breaker is ralph's circuit breaker: a pure state machine that looks
// at one iteration at a time and decides whether the loop may go on.
//
// It reads no clock and does no I/O. Every input, including the time, arrives
// in an [Observation]; the state is a plain JSON-serialisable [State] that the
// store package persists as .ralph/.circuit_breaker_state. [State.Step] returns
// a new state and leaves the old one untouched, so the same step can later run
// as a deterministic activity inside a durable workflow.
//
// # States
//
//	CLOSED ──2 no-progress strikes──► HALF_OPEN ──threshold──► OPEN
//	  ▲                                  │    ▲                  │
//	  └─────────────progress─────────────┘    └─cooldown (start)─┘
//
// Every rule below can also open a CLOSED breaker directly. CLOSED is
// normal operation. HALF_OPEN is "monitoring": the loop still runs,
// one productive iteration closes the breaker again. OPEN halts the loop; it
// carries a [Reason], a human message and the time it opened. OPEN is left
// only at start-up ([State.OnStart]: after the cooldown it moves to HALF_OPEN
// for a single trial iteration, or straight to CLOSED with AutoReset) or by
// hand ([State.Reset]).
//
// # How an iteration is classified
//
// Each observation falls into exactly one class, checked in this order:
//
//  1. stalled, blocked: the agent reported STATUS BLOCKED. It counts as no
//     progress even if files changed, because the agent's own statement that
//     it cannot go on outweighs incidental edits (notes, plan ticks).
//  2. productive: Progress is true. This includes an iteration that timed out
//     or exited non-zero after changing files: the work is there.
//  3. failure: AgentFailed or TimedOut without progress.
//  4. questions only: OnlyQuestions without progress. The agent asked instead
//     of acting; such iterations neither count towards no progress nor reset
//     it, so a loop that alternates questions and idling still trips.
//  5. stalled: everything else (no progress).
//
// # Rules (thresholds from [Thresholds]; a threshold of 0 turns its rule off)
//
// No progress: each stalled iteration adds one strike (two with an output
// decline, below); a productive one resets the streak; failures and
// questions-only iterations leave it alone. Two strikes move CLOSED to
// HALF_OPEN, NoProgress (3) strikes open the breaker with reason no_progress
// (or blocked when the tripping iteration reported BLOCKED; the agent's
// reason is kept in the state and the message).
//
// Same error: the error lines of an iteration are normalised (see
// [NormalizeError]: digits, timestamps, durations, hex ids and temporary path
// parts removed, whitespace collapsed, case folded), de-duplicated and sorted,
// and hashed into a signature. The same signature in SameError (5)
// consecutive iterations opens with same_error. A different set restarts the
// streak at one; an iteration without errors resets it. Progress alone does
// not reset it (only the recovery from HALF_OPEN does, below): an agent that
// edits code and hits the same failure every time is the classic stuck loop,
// and git sees its edits as progress.
//
// Permission denials: an iteration with denials adds one, any other resets
// to zero, progress or not (a refused tool is refused every time until the
// user changes ALLOWED_TOOLS). PermissionDenial (2) in a row open with
// permission_denied and the union of denied tools, so the caller can exit
// with code 3 and name the tools to allow.
//
// Repeated failures: Failure (5) failures in a row open with
// repeated_failures. Any iteration that is not a failure resets the streak.
// Failures are kept apart from no progress because they are often transient
// (overloaded API, network) and deserve more patience than an idle agent.
//
// Output decline: the state keeps the output sizes (bytes) of the last three
// iterations that produced output and were not questions-only. An iteration
// declines when its output is more than OutputDeclinePercent (70) % below the
// mean of those sizes, that is, in integers, when
//
//	size*100*n < sum*(100-OutputDeclinePercent)
//
// with n and sum the count and sum of the kept sizes (n >= 1; with no
// baseline nothing declines). A decline alone changes nothing; a declining
// stalled iteration counts as two no-progress strikes instead of one. When
// that extra strike is what reaches the NoProgress threshold, the reason is
// output_decline rather than no_progress.
//
// Worked example with the defaults (NoProgress 3, OutputDeclinePercent 70):
//
//	loop  bytes  progress  baseline                     below 30 %?          strikes  state
//	1     12000  yes       none                         -                    0        CLOSED
//	2     11000  yes       12000                        -                    0        CLOSED
//	3     13000  yes       (12000+11000)/2 = 11500      -                    0        CLOSED
//	4     10000  no        (12000+11000+13000)/3=12000  10000 < 3600? no     1        CLOSED
//	5      3000  no        (11000+13000+10000)/3=11333  3000 < 3400? yes     3        OPEN output_decline
//
// (30 % of the baseline is the line to fall below; in integers loop 5 is
// 3000*100*3 = 900000 < 34000*30 = 1020000.) Had loop 5 printed 3500 bytes it
// would have added one strike, reached 2 and only moved to HALF_OPEN. A
// declining iteration that would have reached the threshold anyway opens with
// no_progress: output_decline names the case where the decline decided.
//
// When several rules trip in the same iteration the reason is chosen in this
// order: permission_denied (the only one the user fixes in configuration),
// repeated_failures, same_error, then the no-progress family.
//
// # Trial after cooldown
//
// [State.OnStart] moves an OPEN breaker whose cooldown has passed to
// HALF_OPEN with Trial set. Counters are kept, so the first iteration of the
// trial decides: if it trips a rule (the same error set or a denial again,
// even with progress) the breaker opens again; otherwise progress closes it,
// a questions-only iteration keeps the trial going, and anything else (no
// progress, a failure) opens it again at once, with the reason that fits
// that iteration. Outside a trial, progress in HALF_OPEN closes the breaker
// and forgets all streaks.
//
// # Validation
//
// A state read from disk may be torn or hand-edited. [State.Validate] reports
// values this package never writes (unknown states or reasons, negative
// counters, a reason on a breaker that is not open, ...) so the caller can
// report the file and start from [New]. Files written by the bash version of
// Ralph carry only a subset of the fields and validate cleanly.
package breaker
