package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"ralph/internal/engine"
	"ralph/internal/gate"
	"ralph/internal/loop"
	"ralph/internal/monitor"
	"ralph/internal/redact"
)

// `ralph run` in a terminal asks the person there itself: each Claude Code
// call gets ralph's gate, and what a call waits on — a tool call outside
// the allow-list, a question — shows in the dashboard (--monitor), which
// takes the key (a allow once, t allow for this run, d deny) or the typed
// answer, or else on the terminal's lines, where a typed line answers.
// Each decision goes in the iteration's receipt, from "terminal". Where
// nobody is at a terminal (no terminal, --json, CI, --no-gate) there is no
// gate and a refused tool ends the run permission_denied, as before.

// surfaceTerminal is where a decision at ralph run's dashboard came from.
const surfaceTerminal = "terminal"

// termGate is the person at ralph run's dashboard, as the gate's
// Responder, and the dashboard's monitor.Responder.
type termGate struct {
	show func([]monitor.Prompt) // tells the dashboard what waits now
	// again asks about an item again after a line that answers nothing
	// (the plain terminal's; nil at the dashboard).
	again func(monitor.Prompt)
	now   func() time.Time
	user  string

	mu     sync.Mutex
	closed bool // the dashboard is gone: nobody answers
	seq    int
	items  []*termItem // oldest first
	grants []string    // "allow for this run": gate.Grant keys
	log    []loop.GateDecision
}

// termItem is one thing a call waits on.
type termItem struct {
	prompt monitor.Prompt
	key    string         // an approval's grant key; "": none
	reply  chan termReply // buffered
}

type termReply struct {
	allow, forRun bool
	text          string // an answer; for a denial, why
	gone          bool   // the dashboard closed before an answer
}

func newTermGate(show func([]monitor.Prompt)) *termGate {
	return &termGate{show: show, now: time.Now, user: clipUser(os.Getenv("USER"))}
}

func clipUser(s string) string {
	s = strings.Join(strings.Fields(redact.String(s)), " ")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// gateWanted reports whether ralph run asks the person at its terminal:
// shown is whether it shows them anything there (the dashboard, or human
// lines on a terminal).
func gateWanted(shown, noGate bool, stdinTerminal bool, getenv func(string) string) bool {
	ci := getenv("CI")
	return shown && !noGate && stdinTerminal && (ci == "" || ci == "false" || ci == "0")
}

// add shows a new item; the returned func takes it off again.
func (g *termGate) add(kind, what string, options []string, key string) (*termItem, func()) {
	g.mu.Lock()
	g.seq++
	prefix := "a"
	if kind == monitor.PromptQuestion {
		prefix = "q"
	}
	it := &termItem{prompt: monitor.Prompt{ID: fmt.Sprintf("%s%d", prefix, g.seq), Kind: kind, What: what, Options: options},
		key: key, reply: make(chan termReply, 1)}
	g.items = append(g.items, it)
	g.mu.Unlock()
	g.publish()
	return it, func() {
		g.mu.Lock()
		g.items = slices.DeleteFunc(g.items, func(x *termItem) bool { return x == it })
		g.mu.Unlock()
		g.publish()
	}
}

func (g *termGate) publish() {
	g.mu.Lock()
	ps := make([]monitor.Prompt, len(g.items))
	for i, it := range g.items {
		ps[i] = it.prompt
	}
	g.mu.Unlock()
	if g.show != nil {
		g.show(ps)
	}
}

// record keeps a decision for the call's receipt.
func (g *termGate) record(item, what, outcome string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.log) >= 1000 {
		return
	}
	g.log = append(g.log, loop.GateDecision{At: g.now(), Item: item, What: what, Outcome: outcome, Surface: surfaceTerminal, User: g.user})
}

// take is engine.Deps.Decisions.
func (g *termGate) take() []loop.GateDecision {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.log
	g.log = nil
	return out
}

// Close is the dashboard's end (q leaves it, the loop goes on): what
// waits is denied or left unanswered at once, and later calls are told
// nobody is there.
func (g *termGate) Close() {
	g.mu.Lock()
	g.closed = true
	items := slices.Clone(g.items)
	g.mu.Unlock()
	for _, it := range items {
		select {
		case it.reply <- termReply{gone: true}:
		default:
		}
	}
}

func (g *termGate) gone() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// Ask shows the question and waits for the typed answer.
func (g *termGate) Ask(ctx context.Context, q gate.Question) (string, error) {
	if g.gone() {
		return "", gate.ErrNobody
	}
	it, done := g.add(monitor.PromptQuestion, q.Text, q.Options, "")
	defer done()
	select {
	case r := <-it.reply:
		if r.gone {
			return "", gate.ErrNobody
		}
		return r.text, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Approve shows the tool call and waits for the key.
func (g *termGate) Approve(ctx context.Context, a gate.Approval) (gate.Decision, error) {
	what := gate.Describe(a)
	key, _ := gate.KeyOf(a)
	g.mu.Lock()
	granted := key != "" && slices.Contains(g.grants, key)
	g.mu.Unlock()
	if granted {
		g.record("", what, "allowed (for this run, earlier)")
		return gate.Decision{Allow: true}, nil
	}
	if g.gone() {
		return gate.Decision{}, gate.ErrNobody
	}
	it, done := g.add(monitor.PromptApproval, what, nil, key)
	defer done()
	select {
	case r := <-it.reply:
		if r.gone {
			g.record(it.prompt.ID, what, "denied (the dashboard was closed)")
			return gate.Decision{}, gate.ErrNobody
		}
		outcome := "denied"
		switch {
		case r.allow && r.forRun && key != "":
			outcome = "allowed for this run"
		case r.allow && r.forRun:
			outcome = "allowed once (nothing exact to allow for the run)"
		case r.allow:
			outcome = "allowed once"
		}
		g.record(it.prompt.ID, what, outcome)
		if !r.allow {
			msg := "denied by the person at the terminal"
			if r.text != "" {
				msg += ": " + r.text
			}
			return gate.Decision{Message: msg}, nil
		}
		return gate.Decision{Allow: true}, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			g.record(it.prompt.ID, what, "denied (no decision in time)")
		}
		return gate.Decision{}, ctx.Err()
	}
}

// find is the waiting item id, if any.
func (g *termGate) find(id string) *termItem {
	for _, it := range g.items {
		if it.prompt.ID == id {
			return it
		}
	}
	return nil
}

// Decide is the dashboard's a, t or d on an approval.
func (g *termGate) Decide(id string, allow, forRun bool) error {
	return g.decide(id, allow, forRun, "")
}

// decide answers the approval id; why is a denial's reason, for the agent.
func (g *termGate) decide(id string, allow, forRun bool, why string) error {
	g.mu.Lock()
	it := g.find(id)
	if it == nil || it.prompt.Kind != monitor.PromptApproval {
		g.mu.Unlock()
		return fmt.Errorf("no tool call %s waits", id)
	}
	var same []*termItem
	if allow && forRun && it.key != "" {
		if !slices.Contains(g.grants, it.key) {
			g.grants = append(g.grants, it.key)
		}
		// The same call waiting twice at once is decided once.
		for _, o := range g.items {
			if o != it && o.key == it.key {
				same = append(same, o)
			}
		}
	}
	g.mu.Unlock()
	for _, o := range same {
		select {
		case o.reply <- termReply{allow: true, forRun: true}:
		default:
		}
	}
	select {
	case it.reply <- termReply{allow: allow, forRun: forRun, text: redact.String(strings.TrimSpace(why))}:
	default: // decided already
	}
	return nil
}

// Answer is the dashboard's typed answer to a question.
func (g *termGate) Answer(id, text string) error {
	g.mu.Lock()
	it := g.find(id)
	g.mu.Unlock()
	if it == nil || it.prompt.Kind != monitor.PromptQuestion {
		return fmt.Errorf("no question %s waits", id)
	}
	select {
	case it.reply <- termReply{text: redact.String(text)}:
	default:
	}
	return nil
}

// withTermGate gives each agent call of the run the gate, answered at the
// dashboard that opts shows.
func withTermGate(deps *engine.Deps, opts *monitor.Options, spec loop.Spec) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the gate needs ralph's own path: %w", err)
	}
	feed := monitor.NewFeed()
	g := newTermGate(feed.Pending)
	deps.Gate = &gate.Gate{Responder: g, Bridge: exe, Timeout: spec.ApprovalTimeout}
	deps.Decisions = g.take
	opts.Feed, opts.Responder = feed, g
	return nil
}

// isTerminalReader reports a terminal on the other end of r (stdin).
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// withLineGate gives each agent call of a plain `ralph run` in a terminal
// the gate, asked on the terminal's lines: each new item is printed with
// what to type, and a line typed answers the oldest item waiting (a, t or
// d [reason] for a tool call; the answer itself for a question).
func withLineGate(deps *engine.Deps, spec loop.Spec, out io.Writer, in io.Reader) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the gate needs ralph's own path: %w", err)
	}
	var mu sync.Mutex
	shown := map[string]bool{}
	g := newTermGate(func(ps []monitor.Prompt) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range ps {
			if shown[p.ID] {
				continue
			}
			shown[p.ID] = true
			fmt.Fprintln(out, linePrompt(p))
		}
	})
	g.again = func(p monitor.Prompt) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, linePrompt(p))
	}
	go g.readLines(in)
	deps.Gate = &gate.Gate{Responder: g, Bridge: exe, Timeout: spec.ApprovalTimeout}
	deps.Decisions = g.take
	return nil
}

// linePrompt is an item as a plain terminal shows it.
func linePrompt(p monitor.Prompt) string {
	what := strings.Join(strings.Fields(p.What), " ")
	if p.Kind == monitor.PromptQuestion {
		s := "ralph: the agent asks (" + p.ID + "): " + what
		if len(p.Options) > 0 {
			s += " [" + strings.Join(p.Options, " / ") + "]"
		}
		return s + "\nralph: type the answer, then Enter"
	}
	return "ralph: the agent asks to run (" + p.ID + "): " + what +
		"\nralph: type a (allow once), t (allow for this run) or d [reason] (deny), then Enter"
}

// readLines answers the oldest waiting item with each line typed; a line
// with nothing waiting is ignored, one that fits no answer says so.
func (g *termGate) readLines(in io.Reader) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		g.mu.Lock()
		var it *termItem
		if len(g.items) > 0 {
			it = g.items[0]
		}
		g.mu.Unlock()
		if it == nil || line == "" {
			continue
		}
		if it.prompt.Kind == monitor.PromptQuestion {
			_ = g.Answer(it.prompt.ID, line)
			continue
		}
		word, why, _ := strings.Cut(line, " ")
		switch word {
		case "a":
			_ = g.decide(it.prompt.ID, true, false, "")
		case "t":
			_ = g.decide(it.prompt.ID, true, true, "")
		case "d":
			_ = g.decide(it.prompt.ID, false, false, why)
		default:
			if g.again != nil {
				g.again(it.prompt) // not an answer: asked again
			}
		}
	}
}
