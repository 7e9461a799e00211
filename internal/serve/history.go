package serve

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/loop"
	"ralph/internal/store"
	"ralph/internal/transcript"
)

// The history of every task the store keeps: `ralph task list --all`,
// `ralph task show`, GET /api/tasks?all=1, GET /api/tasks/id/{id} and the
// dashboard's session, task and iteration pages read it.

// History lists the tasks f selects, newest first. A session's latest task
// is its live view; an earlier one is what the store kept of it: its
// loop count as it ended, and its cost from its iterations.
func (d *Daemon) History(f TaskFilter) ([]TaskView, error) {
	tasks, err := d.db.TasksWhere(f)
	if err != nil {
		return nil, err
	}
	latest := map[string]string{}
	if cur, err := d.db.CurrentTasks(); err == nil {
		for _, t := range cur {
			latest[t.Session] = t.ID
		}
	}
	var usage map[string]TaskUsage
	out := []TaskView{}
	for _, t := range tasks {
		if latest[t.Session] == t.ID {
			v, err := d.view(t)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		if usage == nil {
			if usage, err = d.Usage(); err != nil {
				return nil, err
			}
		}
		out = append(out, pastView(t, usage[t.ID]))
	}
	return out, nil
}

// pastView is a task no longer its session's latest, from its row.
func pastView(t Task, u TaskUsage) TaskView {
	return maskView(TaskView{ID: t.ID, Session: t.Session, Title: t.Title, Origin: t.Origin, OriginURL: t.OriginURL, State: t.State,
		LoopCount: t.Loops, MaxLoops: t.MaxLoops, ExitReason: t.ExitReason, Message: t.Message, Questions: nonNil(t.Questions),
		PRURL: t.PRURL, PRDraft: t.PRDraft, TaskFile: t.File, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, History: []HistoryItem{},
		Summary: u.Summary, CostUSD: u.CostUSD})
}

// StateCounts counts every kept task by state.
func (d *Daemon) StateCounts() (map[fleet.State]int, error) { return d.db.StateCounts() }

// TaskDetail is `ralph task show`'s task: its view, every kept iteration
// with its receipt, the questions asked and the answers given, and every
// command people gave it (docs/serve.md, "History").
type TaskDetail struct {
	TaskView
	Iterations []IterationRecord `json:"iterations"`
	Answers    []Answer          `json:"answers"`
	// Commands (the view's last few) are all of them here.
}

// IterationRecord is one iteration of a task: its record (metrics.jsonl's
// line, its loop counted from the task's start) and why it was decided so.
type IterationRecord struct {
	loop.Metrics
	// SessionLoop is the session's number of the iteration, the one its
	// log's name carries.
	SessionLoop int    `json:"session_loop"`
	Why         string `json:"why"`
	// HasLog says the iteration's log is still kept (logs are pruned by
	// count, records by HISTORY_DAYS).
	HasLog bool `json:"has_log"`
}

// Answer is one round of questions and the answer a person gave.
type Answer struct {
	At        string   `json:"at"` // as the task file writes it: 2006-01-02 15:04, UTC
	Questions []string `json:"questions"`
	Answer    string   `json:"answer"`
}

// Show is the task id names, with its history.
func (d *Daemon) Show(id string) (TaskDetail, error) {
	t, err := d.taskByID(id)
	if err != nil {
		return TaskDetail{}, err
	}
	var v TaskView
	if cur, err := d.db.CurrentTask(t.Session); err == nil && cur.ID == t.ID {
		v, err = d.view(t)
		if err != nil {
			return TaskDetail{}, err
		}
	} else {
		u, err := d.Usage()
		if err != nil {
			return TaskDetail{}, err
		}
		v = pastView(t, u[t.ID])
	}
	rec := TaskDetail{TaskView: v, Iterations: []IterationRecord{}, Answers: []Answer{}}
	h, err := d.db.History(t.Session, t.ID, historyKeep)
	if err != nil {
		return rec, err
	}
	logs := d.opts.Home.LogDir(t.Session)
	for _, m := range h {
		ir := IterationRecord{SessionLoop: m.Loop, HasLog: exists(iterationLogPath(logs, m))}
		m = masked(m.Typed())
		if m.Verify != nil {
			run := *m.Verify
			run.Command, run.Tail = store.Redact(run.Command), store.Redact(run.Tail)
			m.Verify = &run
		}
		m.Loop = t.budget().Used(m.Loop)
		ir.Metrics, ir.Why = m, Why(m)
		rec.Iterations = append(rec.Iterations, ir)
	}
	if data, err := readTaskFile(t.File); err == nil {
		rec.Answers = answersIn(data)
	}
	if cmds, err := d.db.Commands(t.ID, 10000); err == nil {
		rec.Commands = cmds
	}
	return rec, nil
}

// IterationLog is one iteration's record and its log, rendered as
// `ralph logs --iteration N` renders it.
type IterationLog struct {
	Task      TaskView        `json:"task"`
	Iteration IterationRecord `json:"iteration"`
	// Log is the rendered log, masked; Truncated says only its end is
	// shown (LogLimit).
	Log       string `json:"log"`
	Truncated bool   `json:"truncated,omitempty"`
}

// LogLimit is how much of an iteration's log (its end) is rendered.
const LogLimit = 4 << 20

// IterationLogOf is iteration n (the task's own count) of the task id
// names.
func (d *Daemon) IterationLogOf(id string, n int) (IterationLog, error) {
	rec, err := d.Show(id)
	if err != nil {
		return IterationLog{}, err
	}
	var it *IterationRecord
	for i := range rec.Iterations {
		if rec.Iterations[i].Loop == n {
			it = &rec.Iterations[i]
		}
	}
	if it == nil {
		return IterationLog{}, &fleet.Error{Code: fleet.NotFound, Msg: fmt.Sprintf("task %s has no iteration %d kept", id, n)}
	}
	out := IterationLog{Task: rec.TaskView, Iteration: *it}
	out.Task.Commands = nil
	if !it.HasLog {
		return out, nil
	}
	// The path comes from the unmasked record: the masked one is the same
	// but for the agent's words.
	sessLoop := it.SessionLoop
	path := filepath.Join(d.opts.Home.LogDir(rec.Session), store.IterationLogBase(sessLoop, it.StartedAt)+store.StdoutSuffix)
	data, truncated, err := readTail(path, LogLimit)
	if err != nil {
		return out, err
	}
	dir := ""
	if s, err := d.session(rec.Session); err == nil {
		dir = s.Dir
	}
	var b strings.Builder
	for _, e := range transcript.Render(data, transcript.Options{Dir: dir}) {
		b.WriteString(store.Redact(e.String()))
	}
	out.Log, out.Truncated = b.String(), truncated
	return out, nil
}

func iterationLogPath(dir string, m loop.Metrics) string {
	return filepath.Join(dir, store.IterationLogBase(m.Loop, m.StartedAt)+store.StdoutSuffix)
}

func exists(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// readTail reads the last limit bytes of path, from a line's start.
func readTail(path string, limit int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	from := max(fi.Size()-limit, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, from, fi.Size()-from))
	if err != nil {
		return nil, false, err
	}
	if from > 0 {
		if i := strings.IndexByte(string(data), '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return data, from > 0, nil
}

// answerHead is the heading of one round in a task file's "## Answers".
var answerHead = regexp.MustCompile(`(?m)^### (\d{4}-\d\d-\d\d \d\d:\d\d)\s*$`)

// answersIn reads the rounds of questions and answers appendAnswer wrote.
func answersIn(taskFile []byte) []Answer {
	s := string(taskFile)
	i := strings.Index(s, "\n## Answers\n")
	if i < 0 {
		return []Answer{}
	}
	s = s[i+len("\n## Answers\n"):]
	out := []Answer{}
	heads := answerHead.FindAllStringSubmatchIndex(s, -1)
	for k, h := range heads {
		end := len(s)
		if k+1 < len(heads) {
			end = heads[k+1][0]
		}
		a := Answer{At: s[h[2]:h[3]], Questions: []string{}}
		var ans []string
		inAnswer := false
		for _, line := range strings.Split(s[h[1]:end], "\n") {
			switch {
			case strings.HasPrefix(line, "Q: ") && !inAnswer:
				a.Questions = append(a.Questions, store.Redact(strings.TrimPrefix(line, "Q: ")))
			case strings.HasPrefix(line, "A: ") && !inAnswer:
				inAnswer = true
				ans = append(ans, strings.TrimPrefix(line, "A: "))
			case inAnswer:
				ans = append(ans, line)
			}
		}
		a.Answer = store.Redact(strings.TrimSpace(strings.Join(ans, "\n")))
		out = append(out, a)
	}
	return out
}

// Why explains an iteration's decision from its record: what the agent
// said, what ralph measured, what the verify gate found.
func Why(m loop.Metrics) string {
	var parts []string
	if m.Status != "" {
		parts = append(parts, "status "+m.Status)
	}
	if m.ExitSignal {
		parts = append(parts, "exit signal")
	}
	switch {
	case m.Failed && m.TimedOut:
		parts = append(parts, "timed out")
	case m.Failed:
		parts = append(parts, fmt.Sprintf("failed (exit %d)", m.ExitCode))
	}
	if m.UsageLimit {
		parts = append(parts, "usage limit")
	}
	if m.Progress {
		parts = append(parts, "progress")
	} else {
		parts = append(parts, "no progress")
	}
	if m.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d errors", m.Errors))
	}
	if m.Denials > 0 {
		parts = append(parts, fmt.Sprintf("%d permission denials", m.Denials))
	}
	if m.LinesAdded > 0 || m.LinesRemoved > 0 {
		parts = append(parts, fmt.Sprintf("+%d −%d lines", m.LinesAdded, m.LinesRemoved))
	}
	if m.Commit != "" && len(m.Commit) >= 10 {
		parts = append(parts, "commit "+m.Commit[:10])
	}
	switch v := m.Verify; {
	case v != nil && m.Verified:
		parts = append(parts, "verified: "+v.Command+" passed")
	case v != nil:
		parts = append(parts, "not verified: "+v.Command+" "+v.Outcome())
	}
	if m.Breaker != "" && m.Breaker != "CLOSED" {
		parts = append(parts, "breaker "+m.Breaker)
	}
	return strings.Join(parts, ", ")
}

// ParseSince reads a --since / ?since=: a duration back from now ("36h",
// "7d") or a date ("2026-11-20", or RFC 3339).
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(d, "%d", &n); err == nil && n >= 0 && fmt.Sprint(n) == d {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("since: %q is neither a duration (36h, 7d) nor a date (2026-11-20, or RFC 3339)", s)
}
