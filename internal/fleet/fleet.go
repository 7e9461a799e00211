// Package fleet holds the daemon's decisions about tasks, as pure
// functions over plain data: which queued tasks may start, what a loop's
// exit reason makes of its task, and whether a request (start, loop, stop,
// cancel, reset, answer, pause, resume) is allowed. `ralph serve` performs
// them; tests read them as tables.
package fleet

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"ralph/internal/reason"
)

// State is where a task is.
type State string

// Task states (DESIGN.md, "The fleet").
const (
	// Queued: asked to loop, waiting for a free slot.
	Queued State = "queued"
	// Running: its loop runs now.
	Running State = "running"
	// Waiting: for a person (a question, a budget, a stop, a new `loop`).
	Waiting State = "waiting"
	// Done: the work is finished.
	Done State = "done"
	// Halted: the loop refused to go on (breaker, permissions, integrity);
	// a reset and a new `loop` may resume it.
	Halted State = "halted"
	// Cancelled: given up by a person.
	Cancelled State = "cancelled"
)

// Finished reports whether the task is over: its file is archived and the
// session is free for another task.
func (s State) Finished() bool { return s == Done || s == Cancelled }

// Valid reports a known state.
func (s State) Valid() bool {
	switch s {
	case Queued, Running, Waiting, Done, Halted, Cancelled:
		return true
	}
	return false
}

// Task is what the decisions need of a task.
type Task struct {
	ID      string
	Session string
	State   State
	// Seq orders tasks by creation: the queue is first come, first served
	// among the tasks of sessions of one Priority; a higher one goes first.
	Seq      int64
	Priority int
	// Questions are the agent's pending questions (needs_clarification).
	Questions []string
}

// AfterLoop is the state a task takes when its loop ends with r. A stop
// asked by a person (interrupted) leaves it waiting for the next request.
func AfterLoop(r reason.Reason) State {
	switch {
	case r.Success():
		return Done
	case r == reason.BreakerOpen, r == reason.PermissionDenied, r == reason.IntegrityFailure, r == reason.VerifyFailed:
		// verify_failed: the agent keeps claiming what ralph's check
		// refutes; a person looks before it goes on.
		return Halted
	}
	// needs_clarification, the budgets, a usage limit when told not to
	// wait, a stop request: a person decides what comes next.
	return Waiting
}

// Schedule returns the queued tasks to start now, by their sessions'
// priority, then in creation order: up to
// maxParallel loops run at once (0 or less: one), and a session never runs
// two.
func Schedule(tasks []Task, maxParallel int) []string {
	if maxParallel < 1 {
		maxParallel = 1
	}
	busy := map[string]bool{}
	running := 0
	for _, t := range tasks {
		if t.State == Running {
			running++
			busy[t.Session] = true
		}
	}
	queued := make([]Task, 0, len(tasks))
	for _, t := range tasks {
		if t.State == Queued {
			queued = append(queued, t)
		}
	}
	slices.SortStableFunc(queued, func(a, b Task) int {
		if a.Priority != b.Priority {
			return compare(int64(b.Priority), int64(a.Priority))
		}
		return compare(a.Seq, b.Seq)
	})
	var start []string
	for _, t := range queued {
		if running >= maxParallel {
			break
		}
		if busy[t.Session] {
			continue
		}
		busy[t.Session] = true
		running++
		start = append(start, t.ID)
	}
	return start
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Verb is a request on a session's task.
type Verb string

// The client's verbs.
const (
	Start  Verb = "start"
	Loop   Verb = "loop"
	Stop   Verb = "stop"
	Cancel Verb = "cancel"
	Reset  Verb = "reset"
	Answer Verb = "answer"
	// Pause holds a running loop before its next iteration; Resume lets
	// it go on. The task stays running: it keeps its slot while it holds.
	Pause  Verb = "pause"
	Resume Verb = "resume"
	// Status reads the session's latest task, finished or not.
	Status Verb = "status"
)

// Error is a refused request. Code says what kind, for the API's status.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Code classifies a refusal.
type Code int

// Refusal kinds.
const (
	// NotFound: no such session, or no task on it.
	NotFound Code = iota + 1
	// Conflict: the task's state does not allow the request.
	Conflict
	// Invalid: the command itself is malformed (a field missing or out of
	// range); the error names the field.
	Invalid
)

func refuse(c Code, format string, a ...any) error {
	return &Error{Code: c, Msg: fmt.Sprintf(format, a...)}
}

// Check says whether verb may be applied to session, whose current task
// (the latest one) is cur (nil: the session never had one). sessions are
// the names the daemon knows.
func Check(verb Verb, session string, sessions []string, cur *Task) error {
	if !slices.Contains(sessions, session) {
		known := "none are registered (ralph serve --session NAME=DIR)"
		if len(sessions) > 0 {
			s := slices.Clone(sessions)
			slices.Sort(s)
			known = "known sessions: " + strings.Join(s, ", ")
		}
		return refuse(NotFound, "unknown session %q; %s", session, known)
	}
	if verb == Status {
		if cur == nil {
			return refuse(NotFound, "session %s has no task yet; start one (ralph task start %s TITLE…)", session, session)
		}
		return nil
	}
	if verb == Start || verb == StartLoop {
		if cur != nil && !cur.State.Finished() {
			return refuse(Conflict, "session %s is busy with task %s (%s); cancel it first (ralph task cancel %s)", session, cur.ID, cur.State, session)
		}
		return nil
	}
	if cur == nil || cur.State.Finished() {
		return refuse(NotFound, "session %s has no task; start one (ralph task start %s TITLE…)", session, session)
	}
	switch verb {
	case Loop:
		if cur.State == Running || cur.State == Queued {
			return refuse(Conflict, "task %s on session %s is already %s", cur.ID, session, cur.State)
		}
		if cur.State == Waiting && len(cur.Questions) > 0 {
			return refuse(Conflict, "task %s on session %s is waiting for an answer: ralph task answer %s TEXT…", cur.ID, session, session)
		}
	case Stop:
		// A loop waiting for an answer stops waiting (the questions stay).
		if cur.State != Running && cur.State != Queued && (cur.State != Waiting || len(cur.Questions) == 0) {
			return refuse(Conflict, "task %s on session %s is not looping (%s)", cur.ID, session, cur.State)
		}
	case Pause, Resume:
		if cur.State != Running {
			return refuse(Conflict, "task %s on session %s is not running (%s): only a running loop can %s", cur.ID, session, cur.State, verb)
		}
	case Answer:
		if len(cur.Questions) == 0 {
			return refuse(Conflict, "task %s on session %s has asked no question", cur.ID, session)
		}
	case Approve, Deny:
		if cur.State != Waiting {
			return refuse(Conflict, "task %s on session %s waits for no decision (%s)", cur.ID, session, cur.State)
		}
	case Retry:
		if cur.State != Halted && cur.State != Waiting {
			return refuse(Conflict, "task %s on session %s is %s: only a halted or waiting task is retried", cur.ID, session, cur.State)
		}
		if len(cur.Questions) > 0 {
			return refuse(Conflict, "task %s on session %s is waiting for an answer: ralph task answer %s TEXT…", cur.ID, session, session)
		}
	case Cancel, Reset:
	default:
		return refuse(Conflict, "unknown request %q", verb)
	}
	return nil
}

// EnvPriorities names the setting of the sessions' priorities.
const EnvPriorities = "RALPH_SESSION_PRIORITIES"

// ParsePriorities reads RALPH_SESSION_PRIORITIES, "api:10,web:5": a
// session's queued task starts before those of sessions of a lower
// priority (unnamed: 0; negative: after them).
func ParsePriorities(v string) (map[string]int, error) {
	out := map[string]int{}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, n, ok := strings.Cut(item, ":")
		p, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil {
			return nil, fmt.Errorf("%q: want SESSION:PRIORITY, like api:10 (higher starts first)", item)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("session %q is named twice", name)
		}
		out[name] = p
	}
	return out, nil
}
