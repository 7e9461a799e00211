package loop

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/analyze"
)

func TestFoldKeepsTheAgentSession(t *testing.T) {
	end := t0.Add(time.Minute)
	s1 := AgentSession{ID: "s1", Started: t0.Add(-time.Hour)}
	call := func(id string, mut func(*analyze.Analysis)) Iteration {
		o := an(mut)
		o.SessionID = id
		return Iteration{Loop: 1, Started: t0, Ended: end, Changed: true, Files: 1, InRepo: true, Plan: openPlan, Observed: o}
	}
	tests := []struct {
		name  string
		had   AgentSession
		it    Iteration
		noCon bool
		want  AgentSession
	}{
		{"a first session starts at the call's end", AgentSession{}, call("s1", nil), false, AgentSession{ID: "s1", Started: end}},
		{"the same session goes on from its start", s1, call("s1", nil), false, s1},
		{"a new id is a new conversation", s1, call("s2", nil), false, AgentSession{ID: "s2", Started: end}},
		{"no id reported keeps the session", s1, call("", nil), false, s1},
		{"an id that cannot be one is dropped", s1, call("--model=evil", nil), false, s1},
		{"an error result forgets it", s1, call("s1", func(a *analyze.Analysis) { a.IsError = true }), false, AgentSession{}},
		{"an agent that cannot run forgets it", s1, call("s1", func(a *analyze.Analysis) {
			a.SetupFailure = analyze.SetupFailure{Detected: true, Kind: "auth"}
		}), false, AgentSession{}},
		{"continuity off keeps none", s1, call("s2", nil), true, AgentSession{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := policy()
			p.Agents = []string{"claude"}
			p.NoContinuity = tt.noCon
			st, _ := Fold(State{Version: StateVersion, Session: tt.had}, tt.it, p)
			if st.Session != tt.want {
				t.Errorf("session %+v, want %+v", st.Session, tt.want)
			}
		})
	}
}

func TestNextForgetsTheAgentSession(t *testing.T) {
	now := t0.Add(24 * time.Hour)
	two := policy()
	two.Agents = []string{"claude", "codex"}
	tests := []struct {
		name    string
		s       AgentSession
		agent   string
		limits  map[string]AgentLimit
		expiry  time.Duration
		reset   bool
		want    AgentSession
		why     string
		noteHas string
	}{
		{"a fresh session is resumed", AgentSession{ID: "s1", Started: now.Add(-time.Hour)}, "", nil, 24 * time.Hour, false,
			AgentSession{ID: "s1", Started: now.Add(-time.Hour)}, "", ""},
		{"one exactly the expiry old has expired", AgentSession{ID: "s1", Started: t0}, "", nil, 24 * time.Hour, false,
			AgentSession{}, SessionExpired, "agent session s1 expired"},
		{"no expiry set: never", AgentSession{ID: "s1", Started: t0.Add(-100 * time.Hour)}, "", nil, 0, false,
			AgentSession{ID: "s1", Started: t0.Add(-100 * time.Hour)}, "", ""},
		{"one started in the future has an unknowable age", AgentSession{ID: "s1", Started: now.Add(time.Hour)}, "", nil, 24 * time.Hour, false,
			AgentSession{}, SessionExpired, "expired"},
		{"a person's request", AgentSession{ID: "s1", Started: now}, "", nil, 24 * time.Hour, true,
			AgentSession{}, SessionManual, ""},
		{"an agent switch", AgentSession{ID: "s1", Started: now}, "claude", map[string]AgentLimit{"claude": {Until: now.Add(time.Hour)}},
			24 * time.Hour, false, AgentSession{}, SessionAgentSwitch, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := two
			p.SessionExpiry = tt.expiry
			st := State{Version: StateVersion, Session: tt.s, Agent: tt.agent, AgentLimits: tt.limits}
			st.Run.StartedAt = now
			got, step := Next(st, Observation{Now: now, Plan: openPlan, Control: Control{ResetSession: tt.reset}}, p)
			if step.Kind != Call || got.Session != tt.want || step.ResetSession != tt.why {
				t.Fatalf("step %+v, session %+v; want a call, %+v, reset %q", step, got.Session, tt.want, tt.why)
			}
			if tt.noteHas != "" && (len(step.Notes) == 0 || !strings.Contains(step.Notes[0].Message, tt.noteHas)) {
				t.Errorf("notes %+v, want one saying %q", step.Notes, tt.noteHas)
			}
			if Resume(got, p) != tt.want.ID {
				t.Errorf("Resume = %q", Resume(got, p))
			}
		})
	}
}

func TestResumeAdoptForget(t *testing.T) {
	s := AgentSession{ID: "s1", Started: t0}
	st := State{Session: s}
	if Resume(st, Policy{}) != "s1" || Resume(st, Policy{NoContinuity: true}) != "" {
		t.Error("Resume ignores the policy")
	}
	if ForgetSession(st).Session != (AgentSession{}) || st.Session != s {
		t.Error("ForgetSession")
	}
	for _, tt := range []struct {
		name string
		had  AgentSession
		id   string
		want AgentSession
	}{
		{"an older host's session is adopted", AgentSession{}, "s9", AgentSession{ID: "s9", Started: t0}},
		{"the state's own wins", s, "s9", s},
		{"nothing to adopt", AgentSession{}, "", AgentSession{}},
		{"an id that cannot be one is not", AgentSession{}, "-x", AgentSession{}},
	} {
		if got := AdoptSession(State{Session: tt.had}, tt.id, t0).Session; got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestValidSessionID(t *testing.T) {
	for id, ok := range map[string]bool{"3f1c-aa": true, "ses_01J": true, "a.b:c": true, "": false, "--model=evil": false,
		"a b": false, "a;rm": false, string(make([]byte, 300)): false} {
		if err := ValidSessionID(id); (err == nil) != ok {
			t.Errorf("ValidSessionID(%.20q) = %v", id, err)
		}
	}
}
