package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/redact"
)

// A question the agent asks with the gate's ask tool waits inside the
// agent's call: the call stays running, its tool call open, while the task
// shows waiting with the question; the answer (`ralph task answer`, a chat
// reply, the API: fleet.Answer) goes back as the tool's result in the same
// call. It dies with the call: no answer within APPROVAL_TIMEOUT, and the
// agent is told to ask in its status block instead, which is the durable
// question of taskask.go.

// taskGate answers a task's gate: the daemon's side of package gate.
type taskGate struct {
	d       *Daemon
	session string

	// elsewhere: the loop runs elsewhere (RemoteGate), which keeps the
	// receipts itself; log stays empty.
	elsewhere bool

	mu  sync.Mutex
	log []loop.GateDecision // since the engine last took them
	// carry are the decisions a person made, after a restart ended the
	// call that asked, for the first call's receipt (take).
	carry []loop.GateDecision
}

// maxDecisionLog bounds what a call's decisions keep in memory; the
// receipt keeps fewer still (loop.MaxGateDecisions) and counts the rest.
const maxDecisionLog = 1000

// record keeps a decision for the call's receipt.
func (g *taskGate) record(p *inCallApproval, outcome string, who fleet.Who) {
	rec := loop.GateDecision{At: g.d.opts.Now(), Item: p.id, What: p.what, Outcome: outcome,
		Surface: string(who.Surface), User: clipLine(redact.String(who.User), 100)}
	p.rec = &rec
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.elsewhere || len(g.log) >= maxDecisionLog {
		return
	}
	g.log = append(g.log, rec)
}

// take is engine.Deps.Decisions: the decisions made since it last ran.
// The engine takes them before each call (to drop an interrupted call's)
// and after it: the carried decisions go in after the first take, so
// that the first call's receipt has them.
func (g *taskGate) take() []loop.GateDecision {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.log
	g.log, g.carry = g.carry, nil
	return out
}

// inCallAsk is a question waiting inside a call.
type inCallAsk struct {
	id     string
	q      gate.Question
	answer chan string // buffered: the runner never waits for the call
}

// gateFor is the gate of a task's local loop, and the daemon's side of it
// (whose take feeds the receipts).
func (d *Daemon) gateFor(session string, timeout time.Duration, carry []loop.GateDecision) (*gate.Gate, *taskGate) {
	exe, err := os.Executable()
	if err != nil {
		d.logf("[%s] no gate for the agent's questions: %v", session, err)
		return nil, nil
	}
	tg := &taskGate{d: d, session: session, carry: carry}
	return &gate.Gate{Responder: tg, Bridge: exe, Timeout: timeout}, tg
}

// Ask shows the question on the task and waits for its answer.
func (g *taskGate) Ask(ctx context.Context, q gate.Question) (string, error) {
	return g.ask(ctx, &inCallAsk{q: q, answer: make(chan string, 1)})
}

// ask shows a on the task and waits for its answer.
func (g *taskGate) ask(ctx context.Context, a *inCallAsk) (string, error) {
	if _, err := g.d.send(ctx, g.session, func(r *taskRunner) outcome { return outcome{err: r.askInCall(a)} }); err != nil {
		return "", err
	}
	select {
	case ans := <-a.answer:
		return ans, nil
	case <-ctx.Done():
	}
	// The task stops showing the question: the call goes on without it.
	bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = g.d.send(bg, g.session, func(r *taskRunner) outcome { r.dropInCall(a); return outcome{} })
	select {
	case ans := <-a.answer: // answered as the wait ended
		return ans, nil
	default:
		return "", ctx.Err()
	}
}

// Approve shows the tool call on the task and waits for a decision
// (`ralph task approve|deny`, Telegram's buttons, the API).
func (g *taskGate) Approve(ctx context.Context, a gate.Approval) (gate.Decision, error) {
	return g.approve(ctx, a)
}

// askedLines are the question's lines as the task shows them.
func askedLines(q gate.Question) []string {
	lines := []string{q.Text}
	if len(q.Options) > 0 {
		lines = append(lines, "options: "+strings.Join(q.Options, " / "))
	}
	return lines
}

// askInCall shows the task waiting with the call's question.
func (r *taskRunner) askInCall(a *inCallAsk) error {
	d := r.d
	r.load()
	if r.t == nil || r.w == nil {
		return errors.New("no loop of this session is running")
	}
	if r.inCall != nil {
		// One at a time: Claude Code runs a call's tools in turn; another
		// agent asking twice at once gets the second after the first.
		return errors.New("the agent already waits for an answer")
	}
	if a.id == "" {
		r.asks++
		a.id = fmt.Sprintf("q%d", r.asks)
	}
	t := *r.t
	t.State, t.Questions = fleet.Waiting, maskStrings(askedLines(a.q))
	t.Message = "waiting: question " + a.id + ": " + clipLine(redact.String(a.q.Text), 200)
	t.UpdatedAt = d.opts.Now()
	r.inCall = a
	r.syncPending()
	// Kept as well: a restart ends the call, and the answer then resumes
	// its agent session.
	if d.keepsGateItems() {
		k := keptItem{Item: a.id, Kind: pendingQuestion, What: clipLine(redact.String(a.q.Text), 200), AgentSession: a.q.Session}
		if err := d.db.KeepGateItem(r.t.ID, k); err != nil {
			d.logf("[%s] %s: a restart would lose its session: %v", r.session, a.id, err)
		}
	}
	if err := d.settleWith(&t, noticeOnce(r.t, t, NoticeQuestion), ""); err != nil {
		r.inCall = nil
		r.syncPending()
		r.forget(a.id)
		return err
	}
	r.load()
	return nil
}

// dropInCall ends the task's wait for a question its call gave up on.
func (r *taskRunner) dropInCall(a *inCallAsk) {
	if r.inCall != a {
		return
	}
	r.inCall = nil
	if r.d.stopping() && r.d.keepsGateItems() {
		// The call ends with the daemon, not the question: the task keeps
		// showing it, and the next daemon takes the answer.
		r.syncPending()
		return
	}
	r.forget(a.id)
	r.backToRunning("no answer to question " + a.id + " in time: the agent goes on and may ask again in its status block")
}

// answerInCall gives the call's question its answer: in the task file's
// "## Answers" too, the record people read.
func (r *taskRunner) answerInCall(text, by string) (TaskView, error) {
	d, a := r.d, r.inCall
	cur, err := d.current(fleet.Answer, r.session)
	if err != nil {
		return TaskView{}, err
	}
	t := *cur
	text = redact.String(text)
	if data, err := readTaskFile(t.File); err == nil {
		if err := writeTaskFile(t.File, appendAnswer(data, maskStrings(t.Questions), text, d.opts.Now())); err != nil {
			return TaskView{}, err
		}
	}
	a.answer <- text
	r.inCall = nil
	r.forget(a.id)
	t.Questions, t.UpdatedAt = nil, d.opts.Now()
	if err := d.db.UpdateTask(t); err != nil {
		return TaskView{}, err
	}
	d.publish(t, "task_answered", "")
	r.backToRunning("question " + a.id + " answered by " + by)
	return d.Status(r.session)
}

// clipLine is s on one line, at most n runes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// inCallApproval is a tool call waiting inside a call for a decision.
type inCallApproval struct {
	g        *taskGate
	id       string
	a        gate.Approval
	what     string // Bash(npm publish)
	key      string // of the grant "allow for this task" gives; "": none
	decision chan gate.Decision
	// forTask and rec are what the decision made of it (an allow for the
	// rest of the task, its receipt's record), written before decision
	// is sent: a loop elsewhere keeps both itself (RemoteGate).
	forTask bool
	rec     *loop.GateDecision
}

// ApprovalWhat is a tool call as people read it: the tool and, for a
// command, the command.
func ApprovalWhat(a gate.Approval) string {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(a.Input, &in)
	arg := in.Command
	if arg == "" {
		arg = in.FilePath
	}
	if arg == "" {
		return a.Tool
	}
	return a.Tool + "(" + clipLine(redact.String(arg), 160) + ")"
}

// approve shows the task waiting for a decision and waits for it.
func (g *taskGate) approve(ctx context.Context, a gate.Approval) (gate.Decision, error) {
	p := &inCallApproval{g: g, a: a, what: ApprovalWhat(a), decision: make(chan gate.Decision, 1)}
	p.key, _ = gate.KeyOf(a)
	return g.approveItem(ctx, p)
}

// approveItem shows p on the task and waits for its decision.
func (g *taskGate) approveItem(ctx context.Context, p *inCallApproval) (gate.Decision, error) {
	if _, err := g.d.send(ctx, g.session, func(r *taskRunner) outcome { return outcome{err: r.approvalInCall(p)} }); err != nil {
		return gate.Decision{}, err
	}
	select {
	case d := <-p.decision:
		return d, nil
	case <-ctx.Done():
	}
	bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = g.d.send(bg, g.session, func(r *taskRunner) outcome { r.dropApproval(p); return outcome{} })
	select {
	case d := <-p.decision:
		return d, nil
	default:
		return gate.Decision{}, ctx.Err()
	}
}

// approvalInCall shows the task waiting for a decision on p.
func (r *taskRunner) approvalInCall(p *inCallApproval) error {
	d := r.d
	r.load()
	if r.t == nil || r.w == nil {
		return errors.New("no loop of this session is running")
	}
	if !p.g.elsewhere && r.granted(p.key) {
		// Allowed for this task already: the call goes on unasked. (A
		// loop elsewhere keeps its grants itself, on the exact call: what
		// it shows here is masked.)
		p.g.record(p, "allowed (for this task, earlier)", fleet.Who{})
		p.decision <- gate.Decision{Allow: true}
		d.logf("[%s] %s allowed for this task earlier: not asked again", r.session, p.what)
		return nil
	}
	if r.allowedOnce(p.key) {
		// Allowed once by a person after a restart ended the call that
		// asked: this is that call again.
		p.g.record(p, "allowed (decided after the restart)", fleet.Who{})
		p.decision <- gate.Decision{Allow: true}
		d.logf("[%s] %s allowed once after the restart: not asked again", r.session, p.what)
		return nil
	}
	if r.approvals == nil {
		r.approvals = map[string]*inCallApproval{}
	}
	if p.id == "" {
		r.asks++
		p.id = fmt.Sprintf("a%d", r.asks)
	}
	r.approvals[p.id] = p
	r.syncPending()
	// Kept in the store as well: a restart ends the call, not the item.
	if d.keepsGateItems() {
		k := keptItem{Item: p.id, What: p.what, Key: p.key, AgentSession: p.a.Session}
		if err := d.db.KeepGateItem(r.t.ID, k); err != nil {
			d.logf("[%s] %s: a restart would lose it: %v", r.session, p.id, err)
		}
	}
	t := *r.t
	t.State, t.UpdatedAt = fleet.Waiting, d.opts.Now()
	t.Message = "waiting: approval " + p.id + " for " + p.what
	if err := d.settleWith(&t, noticeOnce(r.t, t, NoticeApproval), p.id+" "+p.what); err != nil {
		delete(r.approvals, p.id)
		r.syncPending()
		r.forget(p.id)
		return err
	}
	r.load()
	return nil
}

// dropApproval ends the wait for a decision its call no longer waits on.
func (r *taskRunner) dropApproval(p *inCallApproval) {
	if r.approvals[p.id] != p {
		return
	}
	delete(r.approvals, p.id)
	if r.d.stopping() && r.d.keepsGateItems() {
		// The call ends with the daemon, not the item: the store keeps it
		// and the task keeps showing it, for the next daemon.
		r.syncPending()
		return
	}
	r.forget(p.id)
	p.g.record(p, "denied (no decision in time)", fleet.Who{})
	r.backToRunning("no decision on " + p.id + " (" + p.what + ") in time: denied")
}

// backToRunning shows the running loop running again once nothing of its
// call waits for a person; while something still does, the task's message
// names the newest item left.
func (r *taskRunner) backToRunning(msg string) {
	d := r.d
	r.load()
	r.syncPending()
	if r.w == nil || r.t == nil || r.t.State != fleet.Waiting {
		return
	}
	if items := r.pendingItems(); len(items) > 0 {
		t := *r.t
		if last := items[len(items)-1]; last.Kind == pendingApproval {
			t.Message = "waiting: approval " + last.ID + " for " + last.What
		} else {
			t.Message = "waiting: question " + last.ID + ": " + last.What
		}
		if t.Message == r.t.Message {
			return
		}
		t.UpdatedAt = d.opts.Now()
		if err := d.db.UpdateTask(t); err != nil {
			d.logf("[%s] %v", r.session, err)
			return
		}
		r.load()
		d.publish(t, "task_waiting", t.Message)
		return
	}
	t := *r.t
	t.State, t.Questions, t.Message, t.UpdatedAt = fleet.Running, nil, msg, d.opts.Now()
	if err := d.db.UpdateTask(t); err != nil {
		d.logf("[%s] %v", r.session, err)
		return
	}
	r.load()
	d.publish(t, "task_running", msg)
}

// forget drops a kept tool call the call no longer waits on.
func (r *taskRunner) forget(item string) {
	if r.t == nil {
		return
	}
	if err := r.d.db.DropGateItem(r.t.ID, item); err != nil {
		r.d.logf("[%s] %s: %v", r.session, item, err)
	}
}

// decide gives the pending tool call item its decision; forTask allows
// its exact call for the rest of the task too.
func (r *taskRunner) decide(item string, allow, forTask bool, why string, who fleet.Who) (TaskView, error) {
	d, by := r.d, who.String()
	verb := fleet.Deny
	if allow {
		verb = fleet.Approve
	}
	if _, err := d.current(verb, r.session); err != nil {
		return TaskView{}, err
	}
	p := r.approvals[item]
	if p == nil && r.w == nil && r.keptItem(item) != nil {
		return r.decideKept(item, allow, forTask, why, who)
	}
	if p == nil || r.w == nil {
		return TaskView{}, &fleet.Error{Code: fleet.Conflict, Msg: fmt.Sprintf("session %s waits for no decision %q", r.session, item)}
	}
	delete(r.approvals, item)
	r.forget(item)
	dec := gate.Decision{Allow: allow, Message: strings.TrimSpace(why)}
	word := "allowed once"
	if !allow {
		word = "denied"
		if dec.Message == "" {
			dec.Message = "denied by " + by
		}
	}
	// A loop elsewhere keeps its grants itself, on the exact call (what
	// it shows here is masked); here the daemon keeps them.
	granted := allow && forTask && (p.g.elsewhere || r.grant(p.key))
	if allow && forTask && !granted {
		word = "allowed once (nothing exact to allow for the task)"
	} else if granted {
		word, p.forTask = "allowed for this task", true
		// The same call waiting twice at once is decided once.
		for id, q := range r.approvals {
			if !q.g.elsewhere && r.granted(q.key) {
				delete(r.approvals, id)
				r.forget(id)
				q.g.record(q, "allowed (for this task)", who)
				q.decision <- gate.Decision{Allow: true}
			}
		}
	}
	p.g.record(p, word, who)
	p.decision <- dec
	r.backToRunning(p.what + " " + word + " by " + by)
	return d.Status(r.session)
}
