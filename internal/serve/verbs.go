package serve

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/store"
)

// TaskView is a task as `ralph task status --json` prints it and the API
// returns it (DESIGN.md, "The fleet": task JSON).
type TaskView struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Title   string `json:"title"`
	Origin  string `json:"origin"`
	// OriginURL is the page the task came from (a GitHub issue, a Slack
	// thread), when its surface knows one.
	OriginURL      string        `json:"origin_url,omitempty"`
	State          fleet.State   `json:"state"`
	LoopCount      int           `json:"loop_count"`
	MaxLoops       int           `json:"max_loops"`
	ExitReason     string        `json:"exit_reason"`
	Message        string        `json:"message,omitempty"`
	CircuitBreaker BreakerView   `json:"circuit_breaker"`
	History        []HistoryItem `json:"history"`
	Questions      []string      `json:"questions"`
	// Pending is every approval and question the agent waits on inside
	// its call, each with the id a decision or an answer names, oldest
	// first (Message shows the newest).
	Pending []PendingItem `json:"pending,omitempty"`
	PRURL   string        `json:"pr_url"`
	// PRDraft says the pull request is a draft (not ready for review).
	PRDraft  bool   `json:"pr_draft,omitempty"`
	TaskFile string `json:"task_file"`
	// Commands are the last commands people gave the task, and who.
	Commands []CommandRecord `json:"commands,omitempty"`
	// Activity is what the loop does now, while it runs ("executing",
	// "waiting: usage_limit") and until when it waits; for a waiting task
	// the watchdog follows, the tmux target it reads.
	Activity  string    `json:"activity,omitempty"`
	WaitUntil time.Time `json:"wait_until,omitzero"`
	// Account is the account its loop runs under or waits for (the
	// agent's name: the daemon's own login of it), docs/budgets.md.
	Account string `json:"account,omitempty"`
	// Summary is what the agent said of its last iteration (masked);
	// CostUSD what the task's iterations cost.
	Summary   string    `json:"summary,omitempty"`
	CostUSD   float64   `json:"cost_usd,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// BreakerView is the session's circuit breaker.
type BreakerView struct {
	State                 string `json:"state"`
	ConsecutiveNoProgress int    `json:"consecutive_no_progress"`
	ConsecutiveSameError  int    `json:"consecutive_same_error"`
	LastProgressLoop      int    `json:"last_progress_loop"`
	TotalOpens            int    `json:"total_opens"`
	Reason                string `json:"reason"`
	CurrentLoop           int    `json:"current_loop"`
	// LastChangeAt is when the breaker last changed state; ErrorHistory
	// the last distinct errors the loop saw (DESIGN.md, request outcomes).
	LastChangeAt time.Time `json:"last_change_at,omitzero"`
	ErrorHistory []string  `json:"error_history"`
}

// HistoryItem is one of the task's last iterations.
type HistoryItem struct {
	Loop           int               `json:"loop"` // the task's own count
	FilesModified  int               `json:"files_modified"`
	LinesAdded     int               `json:"lines_added,omitempty"`
	LinesRemoved   int               `json:"lines_removed,omitempty"`
	Commit         string            `json:"commit,omitempty"`
	ErrorsDetected int               `json:"errors_detected"`
	StatusBlock    map[string]string `json:"status_block"`
	// Verify is the verify command's run on the iteration's completion
	// claim; Verified says the claim stood.
	Verify   *loop.VerifyRun `json:"verify,omitempty"`
	Verified bool            `json:"verified,omitempty"`
	// PRReady and TestsStatus are the analysis's reading of the block
	// (loop.Metrics): what decides reads these, never the block.
	PRReady     bool   `json:"pr_ready"`
	TestsStatus string `json:"tests_status"`
}

// historyShown is how many iterations a task view carries.
const historyShown = 5

// view is t as every surface shows it, its text masked.
func (d *Daemon) view(t Task) (TaskView, error) {
	v, err := d.viewOf(t)
	return maskView(v), err
}

// viewOf is t with what the store and the running loop know of it.
func (d *Daemon) viewOf(t Task) (TaskView, error) {
	v := TaskView{ID: t.ID, Session: t.Session, Title: t.Title, Origin: t.Origin, OriginURL: t.OriginURL, PRDraft: t.PRDraft, State: t.State, MaxLoops: t.MaxLoops,
		ExitReason: t.ExitReason, Message: t.Message, Questions: nonNil(t.Questions), PRURL: t.PRURL, TaskFile: t.File,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, History: []HistoryItem{}}
	p, err := d.db.progress(t.Session)
	if err != nil {
		return v, err
	}
	v.LoopCount = t.Loops
	if p.found && !t.State.Finished() {
		v.LoopCount = t.budget().Used(p.loop)
	}
	v.CircuitBreaker = p.breaker
	v.CostUSD = taskCost(p, t)
	h, err := d.db.recentHistory(t.Session, t.ID)
	if err != nil {
		return v, err
	}
	v.Summary = lastSummary(h)
	for _, m := range h {
		m = m.Typed()
		sb := m.StatusBlock
		if sb == nil {
			sb = map[string]string{}
		}
		v.History = append(v.History, HistoryItem{Loop: t.budget().Used(m.Loop), FilesModified: m.FilesChanged, ErrorsDetected: m.Errors, StatusBlock: sb,
			PRReady: m.PRReady, TestsStatus: m.TestsStatus, Verify: m.Verify, Verified: m.Verified,
			LinesAdded: m.LinesAdded, LinesRemoved: m.LinesRemoved, Commit: m.Commit})
	}
	v.Account = d.shownAccount(t.Session)
	if t.State == fleet.Running {
		d.actMu.Lock()
		a := d.activity[t.Session]
		d.actMu.Unlock()
		v.Activity = a.LastAction
		switch {
		case a.LastAction == "waiting: "+loop.WaitAnswer:
			// Running again: the answer is given, the loop takes it at
			// its next look (within a second).
			v.Activity = "answered; the next call follows"
		case a.Wait != nil:
			v.WaitUntil = a.Wait.Until
		}
		if a.Wait != nil && a.Wait.Kind == loop.WaitUsageLimit {
			// Held by its account's window: it goes on by itself at the
			// reset, so it waits, never runs; said in full, as the fleet's.
			v.State, v.Message = fleet.Waiting, d.quotaText(t.Session, a.Wait.Until)
			v.Activity = v.Message
		}
		if why := heldBy(a); why != "" {
			// Its loop waits for the machine or its tree, not for a
			// person: it goes on by itself (hold.go).
			v.State, v.Message = fleet.Waiting, why
			if a.Wait.Kind == loop.WaitBudget {
				v.Activity = why // the fleet's, not this loop's: said in full
			}
		}
	}
	if t.State == fleet.Waiting {
		v.Pending = d.pendingOf(t)
	}
	if w, ok := d.watch.get(t.Session); ok && t.State == fleet.Waiting && w.Active && w.TaskID == t.ID {
		v.Activity = "watched: tmux " + w.Target
	}
	return v, nil
}

// lastSummary is the last summary the agent gave in h, masked.
func lastSummary(h []loop.Metrics) string {
	for i := len(h) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(h[i].Summary); s != "" {
			return store.Redact(s)
		}
	}
	return ""
}

// taskCost is what the session's iterations cost since t began: a view is
// only ever of a session's latest task, so everything since is its.
func taskCost(p progress, t Task) float64 {
	if !p.found {
		return 0
	}
	return max(p.cost-t.FirstCost, 0)
}

// List returns each session's latest task.
// Every view is current: the dashboard renders its overview once per
// change, so a view the keeper had not caught up with would stay on it.
func (d *Daemon) List() ([]TaskView, error) {
	es, err := d.listed(true)
	if err != nil {
		return nil, err
	}
	out := make([]TaskView, len(es))
	for i, e := range es {
		out[i] = e.view
	}
	return out, nil
}

// Sessions lists the registered sessions.
func (d *Daemon) Sessions() ([]Session, error) { return d.db.Sessions() }

// current checks verb against the session's latest task and returns it.
func (d *Daemon) current(verb fleet.Verb, session string) (*Task, error) {
	all, err := d.db.Sessions()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	var cur *Task
	if t, err := d.db.CurrentTask(session); err == nil {
		cur = &t
	} else if !errors.Is(err, ErrNoTask) {
		return nil, err
	}
	var ft *fleet.Task
	if cur != nil {
		f := cur.fleet()
		ft = &f
	}
	if err := fleet.Check(verb, session, names, ft); err != nil {
		return nil, err
	}
	return cur, nil
}

// Status returns the session's latest task. It only reads, from the store
// and memory: no task's runner takes part, so a busy one never delays it.
func (d *Daemon) Status(session string) (TaskView, error) {
	t, err := d.current(fleet.Status, session)
	if err != nil {
		return TaskView{}, err
	}
	v, err := d.view(*t)
	if err != nil {
		return v, err
	}
	// One task's view says who did what to it; a list does not (a query
	// a task would slow the list of the whole fleet).
	if rec, err := d.db.Commands(t.ID, commandsShown); err == nil {
		v.Commands = rec
	}
	return v, nil
}

// appendAnswer adds the questions and the answer at the end of the task
// file, under "## Answers" (after the status section, so nothing in it
// counts as a checklist item).
func appendAnswer(data []byte, questions []string, answer string, now time.Time) []byte {
	s := string(data)
	if !strings.Contains(s, "\n## Answers\n") {
		s = strings.TrimRight(s, "\n") + "\n\n## Answers\n"
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(s, "\n"))
	fmt.Fprintf(&b, "\n\n### %s\n\n", now.UTC().Format("2006-01-02 15:04"))
	for _, q := range questions {
		fmt.Fprintf(&b, "Q: %s\n", strings.Join(strings.Fields(q), " "))
	}
	fmt.Fprintf(&b, "A: %s\n", strings.TrimSpace(answer))
	return []byte(b.String())
}
