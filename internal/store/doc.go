// Package store owns ralph's state directory, .ralph/ by default: file names,
// atomic writes, corrupt-file detection and recovery, status.json, log
// rotation and retention, metrics, the run lock and secret redaction.
//
// It decides nothing about the loop. Every function here is I/O at the edge;
// the decision cores (breaker, ratelimit, session, ...) hand it plain values.
//
// # Files
//
// Names kept from the bash tool, so existing projects keep working:
//
//	PROMPT.md                 the prompt of every iteration (required)
//	fix_plan.md               the task list (required)
//	AGENT.md                  build and run notes for the agent (required)
//	specs/                    specifications
//	status.json               live status for monitors ([Status])
//	.circuit_breaker_state    breaker state (package breaker)
//	.claude_session_id        agent session to resume (package session)
//	.ralph_session            ralph session (package session)
//	.ralph_session_history    last 50 session transitions (package session)
//	logs/ralph.log            ralph's own log, rotated ([RotatingWriter])
//	logs/metrics.jsonl        one JSON record per iteration ([AppendMetrics])
//
// Names new in ralph:
//
//	.rate_limit_state                         calls and tokens of the last hour (package ratelimit);
//	                                          replaces the bash tool's .call_count/.token_count/.last_reset
//	clarification.md                          the agent's open questions, for a human to answer
//	ralph.lock                                pid of the running `ralph run` ([AcquireLock])
//	logs/iteration_<N>_<UTC>.stdout.log       agent output of iteration N (known secrets masked), e.g.
//	logs/iteration_<N>_<UTC>.stderr.log       iteration_12_20250102T150405Z.stdout.log
//	<name>.corrupt-<UTC>                      a corrupt state file moved aside by [Recover]
//
// # Durability
//
// State files are replaced, never rewritten in place: [WriteFileAtomic]
// writes a temporary file in the same directory, fsyncs it, renames it over
// the target and fsyncs the directory. A reader therefore sees the old or the
// new content, never a mix, and a writer killed half-way leaves only a
// ".<name>.tmp-*" file behind, which [Store.RemoveStaleTemps] sweeps.
// While a run keeps spares ([Store.KeepSpares]), the state document and the
// views are swapped with the file they replace instead of renamed over it,
// and that file, rewritten only when no one else has it open, is the next
// write's temporary file (see spares.go).
//
// A file that does not parse is reported as a [*CorruptError] with the line
// and column of the problem, never silently replaced by defaults; the caller
// reports it and calls [Recover], which keeps the bad bytes for inspection.
package store
