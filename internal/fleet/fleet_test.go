package fleet

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"ralph/internal/reason"
)

func TestAfterLoop(t *testing.T) {
	for r, want := range map[reason.Reason]State{
		reason.PlanComplete: Done, reason.ProjectComplete: Done, reason.CompletionSignals: Done,
		reason.TestSaturation: Done, reason.SafetyThreshold: Done,
		reason.BreakerOpen: Halted, reason.PermissionDenied: Halted, reason.IntegrityFailure: Halted, reason.VerifyFailed: Halted,
		reason.NeedsClarification: Waiting, reason.MaxLoops: Waiting, reason.MaxRuntime: Waiting,
		reason.MaxCost: Waiting, reason.UsageLimit: Waiting, reason.Interrupted: Waiting,
	} {
		if got := AfterLoop(r); got != want {
			t.Errorf("AfterLoop(%s) = %s, want %s", r, got, want)
		}
	}
}

func TestSchedule(t *testing.T) {
	q := func(id, s string, seq int64) Task { return Task{ID: id, Session: s, State: Queued, Seq: seq} }
	r := func(id, s string) Task { return Task{ID: id, Session: s, State: Running} }
	for _, c := range []struct {
		name  string
		tasks []Task
		max   int
		want  []string
	}{
		{"nothing queued", []Task{r("a", "1")}, 2, nil},
		{"creation order, not list order", []Task{q("b", "2", 2), q("a", "1", 1), q("c", "3", 3)}, 2, []string{"a", "b"}},
		{"running ones take slots", []Task{r("x", "9"), q("a", "1", 1), q("b", "2", 2)}, 2, []string{"a"}},
		{"full", []Task{r("x", "9"), r("y", "8"), q("a", "1", 1)}, 2, nil},
		{"a busy session waits, the next one goes", []Task{r("x", "1"), q("a", "1", 1), q("b", "2", 2)}, 3, []string{"b"}},
		{"one per session among the queued", []Task{q("a", "1", 1), q("b", "1", 2), q("c", "2", 3)}, 5, []string{"a", "c"}},
		{"zero means one", []Task{q("a", "1", 1), q("b", "2", 2)}, 0, []string{"a"}},
		{"a higher priority first, then creation order", []Task{q("a", "1", 1), {ID: "b", Session: "2", State: Queued, Seq: 2, Priority: 5}, q("c", "3", 3),
			{ID: "d", Session: "4", State: Queued, Seq: 4, Priority: 5}}, 3, []string{"b", "d", "a"}},
		{"a negative priority after the rest", []Task{{ID: "a", Session: "1", State: Queued, Seq: 1, Priority: -1}, q("b", "2", 2)}, 1, []string{"b"}},
		{"finished and waiting tasks take no slot", []Task{{ID: "d", Session: "3", State: Done}, {ID: "w", Session: "4", State: Waiting}, q("a", "1", 1)}, 1, []string{"a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Schedule(c.tasks, c.max); !slices.Equal(got, c.want) {
				t.Errorf("Schedule = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	sessions := []string{"5", "2"}
	task := func(s State, questions ...string) *Task {
		return &Task{ID: "t1", Session: "5", State: s, Questions: questions}
	}
	for _, c := range []struct {
		verb    Verb
		session string
		cur     *Task
		code    Code   // 0: allowed
		msg     string // part of the message
	}{
		{Start, "7", nil, NotFound, `unknown session "7"; known sessions: 2, 5`},
		{Start, "5", nil, 0, ""},
		{Start, "5", task(Done), 0, ""},
		{Start, "5", task(Cancelled), 0, ""},
		{Start, "5", task(Running), Conflict, "busy with task t1 (running)"},
		{Start, "5", task(Waiting), Conflict, "busy"},
		{Start, "5", task(Halted), Conflict, "busy"},
		{Loop, "5", nil, NotFound, "has no task"},
		{Loop, "5", task(Done), NotFound, "has no task"},
		{Loop, "5", task(Waiting), 0, ""},
		{Loop, "5", task(Halted), 0, ""},
		{Loop, "5", task(Running), Conflict, "already running"},
		{Loop, "5", task(Queued), Conflict, "already queued"},
		{Loop, "5", task(Waiting, "Which database?"), Conflict, "waiting for an answer"},
		{Stop, "5", task(Running), 0, ""},
		{Stop, "5", task(Queued), 0, ""},
		{Stop, "5", task(Waiting), Conflict, "not looping"},
		{Stop, "5", task(Waiting, "Which database?"), 0, ""}, // ends the wait for the answer
		{Cancel, "5", task(Running), 0, ""},
		{Cancel, "5", task(Halted), 0, ""},
		{Cancel, "5", nil, NotFound, "has no task"},
		{Reset, "5", task(Halted), 0, ""},
		{Reset, "9", task(Halted), NotFound, "unknown session"},
		{Answer, "5", task(Waiting, "Which database?"), 0, ""},
		{Answer, "5", task(Waiting), Conflict, "asked no question"},
		{Pause, "5", task(Running), 0, ""},
		{Pause, "5", task(Queued), Conflict, "not running (queued)"},
		{Pause, "5", task(Waiting), Conflict, "only a running loop can pause"},
		{Resume, "5", task(Running), 0, ""},
		{Resume, "5", task(Halted), Conflict, "not running"},
		{Resume, "5", task(Done), NotFound, "has no task"},
		{Status, "5", task(Done), 0, ""},
		{Status, "5", task(Running), 0, ""},
		{Status, "5", nil, NotFound, "no task yet"},
		{Status, "x", nil, NotFound, "unknown session"},
		{Verb("dance"), "5", task(Waiting), Conflict, "unknown request"},
		{StartLoop, "5", nil, 0, ""},
		{StartLoop, "5", task(Done), 0, ""},
		{StartLoop, "5", task(Waiting), Conflict, "busy"},
		{Retry, "5", task(Halted), 0, ""},
		{Retry, "5", task(Waiting), 0, ""},
		{Retry, "5", task(Running), Conflict, "only a halted or waiting task is retried"},
		{Retry, "5", task(Waiting, "Which database?"), Conflict, "waiting for an answer"},
		{Retry, "5", task(Done), NotFound, "has no task"},
	} {
		err := Check(c.verb, c.session, sessions, c.cur)
		var fe *Error
		switch {
		case c.code == 0 && err != nil:
			t.Errorf("%s %s: refused: %v", c.verb, c.session, err)
		case c.code != 0 && (!errors.As(err, &fe) || fe.Code != c.code || !strings.Contains(fe.Msg, c.msg)):
			t.Errorf("%s %s: got %v, want code %d with %q", c.verb, c.session, err, c.code, c.msg)
		}
	}
	if err := Check(Start, "5", nil, nil); err == nil || !strings.Contains(err.Error(), "none are registered") {
		t.Errorf("no sessions: %v", err)
	}
}

func TestStates(t *testing.T) {
	for _, s := range []State{Queued, Running, Waiting, Done, Halted, Cancelled} {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
		if s.Finished() != (s == Done || s == Cancelled) {
			t.Errorf("%s.Finished() = %v", s, s.Finished())
		}
	}
	if State("paused").Valid() {
		t.Error("paused is no state")
	}
}

func TestParsePriorities(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]int
		err  string
	}{
		{"api:10, web:5,ops:-1", map[string]int{"api": 10, "web": 5, "ops": -1}, ""},
		{"", map[string]int{}, ""},
		{"api", nil, `"api": want SESSION:PRIORITY`},
		{"api:high", nil, `"api:high": want SESSION:PRIORITY`},
		{"api:1,api:2", nil, `session "api" is named twice`},
	} {
		got, err := ParsePriorities(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParsePriorities(%q) = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("ParsePriorities(%q) = %v, %v", c.in, got, err)
		}
	}
}
