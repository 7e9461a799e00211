// Package session keeps agent session continuity and ralph's own session
// record across iterations and runs.
//
// Two things are tracked, in the files the bash tool used:
//
//   - The agent session (.claude_session_id): the id the agent reported,
//     which the next iteration resumes (claude --resume ID), and when that
//     session was created. A session is resumed for at most the expiry
//     (SESSION_EXPIRY_HOURS, 24h) after its creation, then a fresh one
//     starts: a long conversation accumulates stale context that makes the
//     agent unpredictable. Resuming a session and getting a new id back
//     continues the same conversation, so the creation time carries over.
//   - The ralph session (.ralph_session): a random id that identifies this
//     project's ralph history across runs, when it started and was last
//     used, and how often and why the agent session was reset. Every reset
//     and every new agent session is a [Transition] in
//     .ralph_session_history, which keeps the last [HistoryLimit].
//
// The decisions are pure functions of their inputs, with the time passed in
// ([Valid], [RalphSession.Touch], [RalphSession.AfterReset],
// [AppendTransition]). [Load]/[Save] and friends read and write one file
// each through the store package's atomic helpers. [Manager] sequences them
// for the engine and the `ralph session` command, recovering corrupt files
// and returning what the caller should report rather than logging it.
//
// Files written by the bash tool are read too: a bare session id on one line
// (its age taken from the file's modification time, as the bash tool did),
// and the older key names of .ralph_session and its history.
package session
