package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"ralph/internal/activity"
	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/store"
)

// Notice kinds: what a person must hear of without asking.
const (
	NoticeDone     = "done"
	NoticeHalted   = "halted"
	NoticeQuestion = "question"
	// NoticeApproval: the agent waits inside its call for a decision on a
	// tool call (Item names it; Message is "a1 Bash(npm publish)").
	NoticeApproval   = "approval"
	NoticeUsageLimit = "usage_limit"
	// NoticeStopped: the loop ended and the task waits for a new `loop`
	// (its budget spent, stopped by hand).
	NoticeStopped = "stopped"
	// NoticeBudget: a daily budget reached 80% (the fleet's, or a
	// session's); it concerns no one task, and goes to every chat.
	NoticeBudget = "budget"
	// NoticeBudgetWait: a task waits for a spent daily budget (Until).
	NoticeBudgetWait = "budget_wait"
)

// Notice is one notification.
type Notice struct {
	// ID is the notice's outbox id, the same on every try to deliver it:
	// a channel that can tell it posted an id before skips it.
	ID        string `json:",omitempty"`
	Kind      string
	Session   string
	TaskID    string
	Title     string
	Message   string
	Questions []string
	// Item is the pending decision of an approval notice.
	Item  string    `json:",omitempty"`
	Until time.Time // of a usage-limit or budget wait

	// Origin and ReplyTo say who started the task and where it hears of
	// it (a chat id; "" when nowhere in particular).
	Origin  string
	ReplyTo string
	// Reason is the loop's exit reason, Summary the agent's last word on
	// its work (masked); Loops/MaxLoops and CostUSD as in TaskView.
	Reason   string
	Summary  string
	Loops    int
	MaxLoops int
	CostUSD  float64
}

// Notifier is a channel notices are delivered to (the log, a chat, the
// requests' issues and threads). The outbox (outbox.go) calls Notify on
// the channel's own goroutine, never holding a lock of the daemon's: it
// may block, holding up only its own channel. A notice counts as
// delivered once Notify returns; a Notifier that can tell a failure worth
// another try implements Deliverer instead.
type Notifier interface{ Notify(Notice) }

// Deliverer is a Notifier that says whether a notice got through: an error
// is tried again later (with backoff, also after a restart), so it is for
// failures another try may mend (the chat's API out of reach), not for a
// refusal. ctx ends when the daemon stops or the try takes too long.
type Deliverer interface {
	Notifier
	Deliver(ctx context.Context, n Notice) error
}

// Named is a Notifier with a name of its own, the channel's name in the
// outbox: it must stay the same across restarts for the deliveries owed
// to it to be made.
type Named interface{ Channel() string }

// Notifiers is several channels: the outbox delivers to each on its own.
type Notifiers []Notifier

// Notify implements Notifier: each in order.
func (ns Notifiers) Notify(n Notice) {
	for _, x := range ns {
		x.Notify(n)
	}
}

// Text is the notice as one human line.
func (n Notice) Text() string {
	if n.Kind == NoticeBudget {
		return "💰 " + n.Message
	}
	head := fmt.Sprintf("session %s, task %s (%s)", n.Session, n.TaskID, n.Title)
	switch n.Kind {
	case NoticeDone:
		return fmt.Sprintf("✅ %s is done: %s", head, n.Message)
	case NoticeHalted:
		return fmt.Sprintf("⛔ %s halted: %s", head, n.Message)
	case NoticeQuestion:
		return fmt.Sprintf("❓ %s asks: %s — answer with `ralph task answer %s TEXT…`", head, strings.Join(n.Questions, " / "), n.Session)
	case NoticeApproval:
		_, what, _ := strings.Cut(n.Message, " ")
		return fmt.Sprintf("🔐 %s asks to run %s — `ralph task approve %s %s` or `ralph task deny %s %s`", head, what, n.Session, n.Item, n.Session, n.Item)
	case NoticeUsageLimit:
		return fmt.Sprintf("⏳ %s waits for a usage limit until %s: %s", head, n.Until.UTC().Format(time.RFC3339), n.Message)
	case NoticeStopped:
		return fmt.Sprintf("⏸ %s stopped: %s", head, n.Message)
	case NoticeBudgetWait:
		return fmt.Sprintf("⏳ %s %s", head, n.Message)
	}
	return head + ": " + n.Message
}

// LogNotifier prints notices to the daemon's log.
type LogNotifier struct{ W io.Writer }

// Channel implements Named.
func (LogNotifier) Channel() string { return "log" }

// Notify implements Notifier.
func (l LogNotifier) Notify(n Notice) {
	fmt.Fprintf(l.W, "%s notify: %s\n", time.Now().UTC().Format(time.RFC3339), store.Redact(n.Text()))
}

// Event is one line of the API's event stream: a task's change of state or
// one of its loop's events.
type Event struct {
	Type    string      `json:"type"`
	At      time.Time   `json:"at"`
	Session string      `json:"session"`
	TaskID  string      `json:"task_id"`
	State   fleet.State `json:"state,omitempty"`
	Loop    int         `json:"loop,omitempty"`
	Message string      `json:"message,omitempty"`
	// Engine is the loop's own event, when the event comes from the loop.
	Engine *loop.Event `json:"event,omitempty"`
	// raw is the masked JSON the hub made (nil before it).
	raw []byte
}

// Droppable reports an event an observer that fell behind may miss: the
// agent's live output, which the iteration's record sums up.
func (e Event) Droppable() bool { return e.Engine != nil && e.Engine.Droppable() }

// lostEvents tells an observer that fell behind how much live output it
// missed.
func lostEvents(n int) Event {
	ev := loop.Event{Type: loop.EventLive, At: time.Now(), Live: &activity.Event{
		Kind: activity.Output, Text: fmt.Sprintf("… %d live event(s) not shown (this view fell behind)", n)}}
	return Event{Type: ev.Type, At: ev.At, Engine: &ev}
}

// hub is the daemon's event bus's observer for the API's stream clients
// and the dashboard: it masks each event once (every string in it:
// the agent's live output, its summary, a loop's message) and hands the
// masked event to every subscriber without ever waiting for one: a client
// too slow to keep a backlog of subQueue events is dropped (its stream
// ends; it reconnects).
type hub struct {
	mu   sync.Mutex
	subs map[chan Event]struct{}
}

const subQueue = 256

func newHub() *hub { return &hub{subs: map[chan Event]struct{}{}} }

func (h *hub) subscribe() (<-chan Event, func()) {
	ch := make(chan Event, subQueue)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// publish masks ev and fans it out.
func (h *hub) publish(ev Event) {
	m, ok := maskEvent(ev)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- m:
		default:
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// maskEvent is ev with every string in it masked (redact.JSON), keeping
// its masked JSON for the event stream, which then encodes nothing.
func maskEvent(ev Event) (Event, bool) {
	b, err := json.Marshal(ev)
	if err != nil {
		return Event{}, false
	}
	b = redact.JSON(b)
	var m Event
	if err := json.Unmarshal(b, &m); err != nil {
		return Event{}, false
	}
	m.raw = b
	return m, true
}

// JSON is the event as the API's stream sends it, masked.
func (e Event) JSON() []byte {
	if e.raw != nil {
		return e.raw
	}
	b, _ := json.Marshal(e)
	return redact.JSON(b)
}
