package loop

import (
	"context"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/ratelimit"
	"ralph/internal/stop"
)

// Spec is what a host needs to run one loop, as plain data: it can be
// written to a task record or passed to a workflow. Agents are named; the
// host resolves the names to adapters.
type Spec struct {
	Dir string `json:"dir"` // the project directory
	// Agents are tried in order: the first is the primary, the others take
	// over while it is held by a usage limit.
	Agents       []AgentSpec   `json:"agents"`
	OutputFormat string        `json:"output_format,omitempty"`
	Live         bool          `json:"live,omitempty"`
	Timeout      time.Duration `json:"timeout,omitempty"`
	// ApprovalTimeout bounds a wait for a person inside a call
	// (APPROVAL_TIMEOUT); 0: the gate's default.
	ApprovalTimeout   time.Duration `json:"approval_timeout,omitempty"`
	Backup            bool          `json:"backup,omitempty"`
	KeepIterationLogs int           `json:"keep_iteration_logs,omitempty"`
	OptionalSections  []string      `json:"optional_sections,omitempty"` // of the plan
	Policy            Policy        `json:"policy"`
	// Env is extra environment for the agent (secrets from .ralphrc); it is
	// never serialised.
	Env []string `json:"-"`
	// Verifier runs the verify command (Policy.Verify); the host that
	// built the spec made it, so it is never serialised either.
	Verifier func(ctx context.Context) VerifyRun `json:"-"`
	// Sandboxed says the agents run confined: the engine then pins the
	// project's git directories and checks what could make host git run
	// a program before every git after a call (gitx.Guard).
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// AgentSpec is one agent the loop can call, with the settings that belong
// to it rather than to the run: a Codex fallback must not be handed the
// Claude model name.
type AgentSpec struct {
	Name         string   `json:"name"`
	Model        string   `json:"model,omitempty"`
	Effort       string   `json:"effort,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
}

// AgentNames lists the agents in order.
func (s Spec) AgentNames() []string {
	names := make([]string, len(s.Agents))
	for i, a := range s.Agents {
		names[i] = a.Name
	}
	return names
}

// Policy is the configuration the decisions need.
type Policy struct {
	Breaker          breaker.Thresholds `json:"breaker"`
	Stop             stop.Options       `json:"stop"`
	Limits           ratelimit.Limits   `json:"limits"`
	Budget           stop.Budget        `json:"budget"`
	UsageLimitWait   time.Duration      `json:"usage_limit_wait,omitempty"` // no reset time known: wait this long
	UsageLimitMargin time.Duration      `json:"usage_limit_margin,omitempty"`
	ExitOnUsageLimit bool               `json:"exit_on_usage_limit,omitempty"`
	// Delay is the pause between iterations.
	Delay time.Duration `json:"delay,omitempty"`
	// FailureBackoff is the first pause after a failed call; it doubles up
	// to FailureBackoffCap (default 10 minutes). 0 turns it off.
	FailureBackoff    time.Duration `json:"failure_backoff,omitempty"`
	FailureBackoffCap time.Duration `json:"failure_backoff_cap,omitempty"`
	// Verify gates every success on the project's own check.
	Verify VerifyPolicy `json:"verify,omitzero"`
	// Agents are the names of Spec.Agents, in order; the fallback rule
	// needs them.
	Agents []string `json:"agents,omitempty"`
	// NoContinuity: every call starts a new agent session (--no-continue).
	// SessionExpiry is how long after its start a session is resumed (0:
	// no limit, as for policies recorded before it existed).
	NoContinuity  bool          `json:"no_continuity,omitempty"`
	SessionExpiry time.Duration `json:"session_expiry,omitempty"`
	// Answerable says a person can answer the agent's questions (a fleet
	// host: ralph serve, a Temporal workflow): a question is a wait for
	// the answer. Otherwise (ralph run) it ends the run with
	// needs_clarification.
	Answerable bool `json:"answerable,omitempty"`
}

// DefaultBackoffCap bounds the failure back-off when the policy sets none.
const DefaultBackoffCap = 10 * time.Minute

func (p Policy) backoffCap() time.Duration {
	if p.FailureBackoffCap > 0 {
		return p.FailureBackoffCap
	}
	return DefaultBackoffCap
}

func (p Policy) agents() []string {
	if len(p.Agents) == 0 {
		return []string{""}
	}
	return p.Agents
}
