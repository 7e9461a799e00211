package loop

import (
	"errors"
	"fmt"
	"time"
)

// AgentSession is the agent's conversation the next call resumes (claude
// --resume ID), kept in State on every host: `ralph run`'s .loop_state,
// the daemon's session row, a Temporal workflow's history.
type AgentSession struct {
	ID string `json:"id"`
	// Started is when the conversation began, not when it was last used:
	// the expiry counts from it, and resuming it under a new id (as some
	// CLIs report) goes on with the same conversation.
	Started time.Time `json:"started,omitzero"`
}

// sessionSkew is how far in the future a session's start may lie and still
// be trusted: clocks of machines sharing a project drift a little, but a
// session "started" hours from now has an age nobody can judge.
const sessionSkew = 5 * time.Minute

// maxSessionID bounds an agent session id; real ones are UUID-sized.
const maxSessionID = 256

// Reasons the agent session is forgotten (Step.ResetSession,
// Decision.ResetSession), as the session history records them.
const (
	SessionAgentSwitch = "agent_switch"
	SessionExpired     = "expired"
	SessionManual      = "manual"
	SessionInterrupted = "interrupted"
)

// Resume is the session the next call resumes: "" for a fresh one, and
// always "" when the policy turns continuity off.
func Resume(st State, p Policy) string {
	if p.NoContinuity {
		return ""
	}
	return st.Session.ID
}

// ForgetSession is st without its agent session: the next call starts a
// new conversation (`ralph session reset`, an interrupted run, a new task).
func ForgetSession(st State) State {
	st.Session = AgentSession{}
	return st
}

// AdoptSession is st with the session an older host kept outside the state
// (the daemon's column, a workflow's input, .claude_session_id), started at
// started, unless the state has one already: how older documents migrate.
// An id that cannot be one is not adopted.
func AdoptSession(st State, id string, started time.Time) State {
	if st.Session.ID != "" || id == "" || ValidSessionID(id) != nil {
		return st
	}
	st.Session = AgentSession{ID: id, Started: started}
	return st
}

// sessionExpired reports a session Next must not resume at now: older than
// the expiry (0: sessions never expire), or started in the future.
func sessionExpired(s AgentSession, now time.Time, expiry time.Duration) bool {
	if s.ID == "" || expiry <= 0 {
		return false
	}
	return s.Started.After(now.Add(sessionSkew)) || !now.Before(s.Started.Add(expiry))
}

// foldSession keeps the session a call reported, after Fold decided: a
// reset forgets it; the same id goes on with its start; a new id is a new
// conversation from the call's end. An id that cannot be one is dropped
// (the previous session stays; the host warns, see ValidSessionID). With
// continuity off there is nothing to keep.
func foldSession(st State, it Iteration, d Decision, p Policy) State {
	id := it.Observed.SessionID
	switch {
	case d.ResetSession != "" || p.NoContinuity:
		st.Session = AgentSession{}
	case id == "" || id == st.Session.ID || ValidSessionID(id) != nil:
	default:
		st.Session = AgentSession{ID: id, Started: it.Ended}
	}
	return st
}

// ValidSessionID rejects what cannot be a session id. The id comes from the
// agent's output (which a prompt injection can shape) and goes back to the
// agent as an argument, so it must not be able to read as an option
// ("--model=evil" would break every later call) or carry anything but the
// letters real ids use: Claude Code, Codex and Gemini print UUIDs, OpenCode
// "ses_…".
func ValidSessionID(id string) error {
	if id == "" {
		return errors.New("empty session id")
	}
	if len(id) > maxSessionID {
		return fmt.Errorf("session id longer than %d bytes", maxSessionID)
	}
	if c := id[0]; !isAlnum(c) {
		return fmt.Errorf("session id starts with %q, not a letter or digit", c)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' && c != ':' {
			return fmt.Errorf("session id contains %q", c)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
