package temporal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/serve"
)

// The human gate on Temporal. A call's gate (its ask and approve tools)
// is served by the worker that holds the call, but what the call waits on
// is the workflow's: the activity sends each question or tool call to its
// own workflow run as the gate update, whose handler keeps it as an item
// of the running call (with an id, a1 or q2, shown in the status the
// daemon watches) and answers once a person decided. The daemon shows the
// items on the task and hands each decision back with the decide update,
// from the one command path. So the workflow is the one place that holds
// them: a daemon restart loses nothing (the call goes on waiting on its
// worker, the restarted daemon shows the same items), "allow for this
// task" lives in the workflow's state for the task's later calls, and
// APPROVAL_TIMEOUT is a durable timer of the handler's.

// Names on the wire.
const (
	// UpdateGate is a call's question or tool call for a person
	// (GateAsk), answered with the reply (GateReply) once decided.
	UpdateGate = "gate"
	// UpdateDecide is a person's decision on an item (GateVerdict).
	UpdateDecide = "gate-decide"
	// versionGate: the calls get the gate. A workflow started before it
	// replays without (its Input has no Gate).
	versionGate = "gate"
)

// The kinds of a GateItem.
const (
	GateApproval = "approval"
	GateQuestion = "question"
)

// MaxGateWait bounds the time one call waits for people in all: past it,
// its asks are answered as no one answered in time. The Iterate activity's
// start-to-close timeout leaves that much room past the call's own limit,
// which does not count the waits.
const MaxGateWait = 24 * time.Hour

// maxGrants bounds a task's "allow for this task" decisions, as on the
// local backend.
const maxGrants = 100

// GateAsk is what a call asks: a question or a tool call outside the
// allow-list.
type GateAsk struct {
	// Attempt is the activity's attempt that asks: an item a retried call
	// asks again is the one its lost attempt asked.
	Attempt  int32          `json:"attempt"`
	Question *gate.Question `json:"question,omitempty"`
	Approval *gate.Approval `json:"approval,omitempty"`
	// What is the tool call as people read it (Bash(npm publish)). The
	// question and the tool call are masked (they are history); Key is
	// the SHA-256 of the exact tool call, which a retry asks again, and
	// Grant the "allow for this task" that would cover it, its command a
	// SHA-256 too (nil: nothing exact to allow).
	What  string      `json:"what,omitempty"`
	Key   string      `json:"key,omitempty"`
	Grant *gate.Grant `json:"grant,omitempty"`
	// Timeout is APPROVAL_TIMEOUT as the call's worker reads it.
	Timeout time.Duration `json:"timeout"`
}

// GateReply answers a GateAsk.
type GateReply struct {
	Answer   string        `json:"answer,omitempty"`
	Decision gate.Decision `json:"decision"`
	// Expired: no decision within the timeout; Gone: the call the item
	// was asked for ended first.
	Expired bool `json:"expired,omitempty"`
	Gone    bool `json:"gone,omitempty"`
	// Record is the decision's record for the call's receipt.
	Record *loop.GateDecision `json:"record,omitempty"`
}

// GateItem is an item a call waits on (Status.Pending).
type GateItem struct {
	ID       string         `json:"id"`
	Kind     string         `json:"kind"`
	What     string         `json:"what,omitempty"`
	Question *gate.Question `json:"question,omitempty"`
	Approval *gate.Approval `json:"approval,omitempty"`
}

// GateVerdict is a person's decision on an item: an answer to a question,
// or allow (ForTask: for the rest of the task) or deny for a tool call.
type GateVerdict struct {
	ID      string             `json:"id"`
	Answer  string             `json:"answer,omitempty"`
	Allow   bool               `json:"allow,omitempty"`
	Message string             `json:"message,omitempty"`
	ForTask bool               `json:"for_task,omitempty"`
	Record  *loop.GateDecision `json:"record,omitempty"`
}

// gateItem is an item of the running call.
type gateItem struct {
	GateItem
	// attempt is the latest attempt that asked for it; key and grant are
	// its ask's.
	attempt int32
	key     string
	grant   *gate.Grant
	verdict *GateVerdict
	expired bool
	gone    bool
	// used: a later attempt took the decision made for a lost one.
	used bool
}

func (it *gateItem) waiting() bool { return it.verdict == nil && !it.expired && !it.gone }

// same reports an item asking what a asks.
func (it *gateItem) same(a GateAsk) bool {
	switch {
	case a.Question != nil && it.Question != nil:
		return a.Question.Text == it.Question.Text && slices.Equal(a.Question.Options, it.Question.Options)
	case a.Approval != nil && it.Approval != nil:
		return a.Key != "" && a.Key == it.key
	}
	return false
}

// setGateHandlers registers the gate's updates. They are accepted only
// while a call of a gated run is under way: the items are its.
func (w *run) setGateHandlers(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateGate, w.gateAsk, workflow.UpdateHandlerOptions{
		Validator: func(a GateAsk) error {
			switch {
			case !w.gated || !w.calling:
				return errors.New("no call of this run waits")
			case (a.Question == nil) == (a.Approval == nil):
				return errors.New("a gate ask is a question or a tool call")
			}
			return nil
		}}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateDecide, w.gateDecide, workflow.UpdateHandlerOptions{
		Validator: func(v GateVerdict) error {
			if it := w.item(v.ID); it == nil || !it.waiting() {
				return fmt.Errorf("no call waits on %s", v.ID)
			}
			return nil
		}})
}

func (w *run) item(id string) *gateItem {
	for _, it := range w.items {
		if it.ID == id {
			return it
		}
	}
	return nil
}

// gateAsk is the gate update's handler: a grant answers at once, so does
// a decision made for the same ask of a lost attempt; otherwise the ask
// waits as an item, for a decision, its timeout or the call's end.
func (w *run) gateAsk(ctx workflow.Context, a GateAsk) (GateReply, error) {
	now := workflow.Now(ctx).UTC().Round(0)
	if a.Approval != nil && a.Grant != nil && slices.Contains(w.grants, *a.Grant) {
		return GateReply{Decision: gate.Decision{Allow: true},
			Record: &loop.GateDecision{At: now, What: a.What, Outcome: "allowed (for this task, earlier)"}}, nil
	}
	it := match(w.items, a)
	if it != nil && it.verdict != nil {
		// Decided while the worker that asked was lost: its retry asks
		// the same and has the decision.
		it.used = true
		return reply(it), nil
	}
	if it == nil {
		w.asks++
		it = &gateItem{GateItem: GateItem{Kind: GateApproval, What: a.What, Question: a.Question, Approval: a.Approval},
			key: a.Key, grant: a.Grant}
		prefix := "a"
		if a.Question != nil {
			it.Kind, it.What, prefix = GateQuestion, a.Question.Text, "q"
		}
		it.ID = fmt.Sprintf("%s%d", prefix, w.asks)
		w.items = append(w.items, it)
	}
	it.attempt = max(it.attempt, a.Attempt)
	w.publish()
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = gate.DefaultTimeout
	}
	ok, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool { return !it.waiting() })
	if err != nil {
		return GateReply{Gone: true}, err
	}
	if !ok && it.waiting() {
		it.expired = true
		w.publish()
	}
	if it.verdict == nil {
		r := GateReply{Expired: it.expired, Gone: it.gone}
		if it.expired && it.Approval != nil {
			r.Record = &loop.GateDecision{At: workflow.Now(ctx).UTC().Round(0), Item: it.ID, What: it.What, Outcome: "denied (no decision in time)"}
		}
		return r, nil
	}
	return reply(it), nil
}

// match is the item a stands for: one that waits on the same (a lost
// attempt's, which a retried call asks again, or a twin asked at once),
// or one decided while the attempt that asked was lost, whose decision
// the retry takes once. An attempt that asks again what it was answered
// asks anew: "allow once" is once. nil: a new item.
func match(items []*gateItem, a GateAsk) *gateItem {
	for _, x := range items {
		if x.same(a) && !x.used && !x.expired && !x.gone && (x.verdict == nil || x.attempt < a.Attempt) {
			return x
		}
	}
	return nil
}

func reply(it *gateItem) GateReply {
	v := it.verdict
	return GateReply{Answer: v.Answer, Decision: gate.Decision{Allow: v.Allow, Message: v.Message}, Record: v.Record}
}

// gateDecide is the decide update's handler: the item is decided, and an
// allow for the rest of the task is kept in the workflow's state, for the
// task's later calls (carried across continue-as-new).
func (w *run) gateDecide(ctx workflow.Context, v GateVerdict) error {
	it := w.item(v.ID)
	if it == nil || !it.waiting() {
		return fmt.Errorf("no call waits on %s", v.ID)
	}
	it.verdict = &v
	if v.Allow && v.ForTask && it.grant != nil && len(w.grants) < maxGrants && !slices.Contains(w.grants, *it.grant) {
		w.grants = append(w.grants, *it.grant)
	}
	w.publish()
	return nil
}

// endCall ends the items of the call that just returned: a handler still
// waiting (a lost attempt's) answers that the call is gone.
func (w *run) endCall() {
	for _, it := range w.items {
		it.gone = true
	}
	w.items = nil
}

// pending are the items the running call waits on, oldest first.
func (w *run) pending() []GateItem {
	var out []GateItem
	for _, it := range w.items {
		if it.waiting() {
			out = append(out, it.GateItem)
		}
	}
	return out
}

// GateAskOf is the ask for a tool call as the workflow keeps it: masked,
// with the SHA-256 of the exact call and of the grant that would cover it,
// so that neither a secret in a command nor the command itself is history
// while the same call is still known again.
func GateAskOf(a gate.Approval) GateAsk {
	masked := a
	masked.Input = redact.JSON(a.Input)
	ga := GateAsk{Approval: &masked, What: serve.ApprovalWhat(a), Key: sha(a.Tool + "\x00" + string(a.Input))}
	if g, ok := gate.GrantFor(a); ok {
		if g.Command != "" {
			g.Command = "sha256:" + sha(g.Command)
		}
		ga.Grant = &g
	}
	return ga
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
