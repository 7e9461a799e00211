// Package session keeps the files people and the bash tool read about
// sessions in step with the agent session the loop's state holds
// (loop.State.Session: the core decides which session a call resumes, when
// it expires and when it is reset; see loop.Resume).
//
// Three files, in the formats the bash tool used:
//
//   - .claude_session_id: a view of the state's agent session (the id the
//     next call resumes, and when that conversation began). Older projects
//     kept the session here: `ralph run` adopts it into the state once
//     (Load reads the bare-id form too, aged by the file's time).
//   - .ralph_session: a random id that identifies this project's ralph
//     history across runs, when it started and was last used, and how
//     often and why the agent session was reset.
//   - .ralph_session_history: every reset and every new agent session as a
//     [Transition], the last [HistoryLimit] kept.
//
// The steps are pure functions with the time passed in
// ([RalphSession.Touch], [RalphSession.AfterReset], [AppendTransition]);
// [Load]/[Save] and friends read and write one file each through the store
// package's atomic helpers; [Manager] sequences them, recovering corrupt
// files and returning what the caller should report rather than logging it.
package session
