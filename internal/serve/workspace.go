package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"ralph/internal/control"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/store"
	"ralph/internal/taskfile"
)

// Home is the daemon's directory (RALPH_HOME) and the files it keeps there
// besides the database: task files, their archive, prompts and logs.
type Home string

func (h Home) DB() string           { return filepath.Join(string(h), "ralph.db") }
func (h Home) TokenFile() string    { return filepath.Join(string(h), "api-token") }
func (h Home) LockFile() string     { return filepath.Join(string(h), "serve.lock") }
func (h Home) SessionsFile() string { return filepath.Join(string(h), "sessions.conf") }
func (h Home) ConfFile() string     { return filepath.Join(string(h), "serve.conf") }
func (h Home) TaskFile(session string) string {
	return filepath.Join(string(h), "handoffs", session+"-task.md")
}
func (h Home) LogDir(session string) string { return filepath.Join(string(h), "logs", session) }
func (h Home) PromptFile(session string) string {
	return filepath.Join(string(h), "prompts", session+".md")
}

// ArchiveFile is where a finished task's file goes.
func (h Home) ArchiveFile(session, id string) string {
	return filepath.Join(string(h), "handoffs", "archive", session+"-"+id+"-task.md")
}

// workspace is engine.Store for one task's loop on one session: the
// project is the session's directory, the plan is the task file, the state
// lives in the database.
type workspace struct {
	home    Home
	db      *DB
	session Session
	taskID  string
	// onStatus receives what the engine publishes (the task's activity).
	onStatus func(store.Status)
	// onSave sees every saved state (the usage limits it holds).
	onSave func(loop.State)
}

func (w *workspace) ProjectDir() string { return w.session.Dir }

func (w *workspace) EnsureDirs() error {
	for _, d := range []string{w.home.LogDir(w.session.Name), filepath.Dir(w.home.PromptFile(w.session.Name))} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) RequiredFiles() ([]string, error) {
	return store.MissingOf(store.Required{Path: w.PromptFile(), Limit: store.MaxPromptSize},
		store.Required{Path: w.FixPlanFile(), Limit: store.MaxPlanSize})
}

// readTaskFile reads a task file as every file that decides what a loop
// does is read: not through a link, and within its size cap.
func readTaskFile(path string) ([]byte, error) {
	return store.ReadIn("", path, store.MaxPlanSize)
}

func (w *workspace) PromptFile() string  { return w.home.PromptFile(w.session.Name) }
func (w *workspace) FixPlanFile() string { return w.home.TaskFile(w.session.Name) }
func (w *workspace) ClarificationFile() string {
	return filepath.Join(w.home.LogDir(w.session.Name), "clarification.md")
}

func (w *workspace) IterationLogs(n int, start time.Time) (string, string) {
	base := filepath.Join(w.home.LogDir(w.session.Name), store.IterationLogBase(n, start))
	return base + store.StdoutSuffix, base + store.StderrSuffix
}

func (w *workspace) PruneIterationLogs(keep int) ([]string, error) {
	// Each task numbers its loops from 1: the newest logs are the latest.
	return store.PruneIterationLogsByTime(w.home.LogDir(w.session.Name), keep)
}

func (w *workspace) LoadState() (loop.State, bool, []string, error) {
	st, found, err := w.db.LoadState(w.session.Name)
	return st, found, nil, err
}

// SaveState commits the state with its record, then rewrites the task
// file's status from the record: the file is a view, rewritten whole from
// the latest iteration, so a kill between the two only delays it.
func (w *workspace) SaveState(st loop.State, rec *loop.Metrics) error {
	if err := w.db.SaveState(w.session.Name, w.taskID, st, rec); err != nil {
		return err
	}
	if w.onSave != nil {
		w.onSave(st)
	}
	if rec == nil {
		return nil
	}
	// SaveState forgot the iteration's agent group in its transaction: it
	// has been reaped, nothing to end after a crash.
	status := rec.StatusBlock["STATUS"]
	if status == "" {
		status = rec.Status
	}
	return rewriteTaskFile(w.FixPlanFile(), status, blockFields(rec.StatusBlock))
}

func (w *workspace) WriteStatus(s store.Status) error {
	if w.onStatus != nil {
		w.onStatus(s)
	}
	return nil
}

// rewriteTaskFile sets the **Status:** line and the RALPH_STATUS section,
// atomically; block nil keeps the section as it is. A file that already
// says so is left alone: most iterations of a loop report the same status
// and block, and the synced rewrite was a sixth of the daemon's own CPU
// per iteration.
func rewriteTaskFile(path, status string, block []taskfile.Field) error {
	data, err := readTaskFile(path)
	if err != nil {
		return err
	}
	if block == nil {
		f, err := taskfile.Parse(path, data)
		if err == nil {
			block = f.Block
		}
	}
	next := []byte(redact.Values(string(taskfile.Update(data, status, maskFields(block)))))
	if bytes.Equal(next, data) {
		return nil
	}
	return store.WriteFileAtomic(path, next, 0o644) // masked: writeTaskFile's bytes
}

// blockOrder is the seed's order of the status block's fields; others
// follow by name.
var blockOrder = []string{"STATUS", "EXIT_SIGNAL", "WORK_TYPE", "FILES_MODIFIED", "TASKS_COMPLETED", "TASKS_REMAINING", "TESTS_STATUS", "RECOMMENDATION"}

func blockFields(m map[string]string) []taskfile.Field {
	if len(m) == 0 {
		return []taskfile.Field{}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if i := slices.Index(blockOrder, k); i >= 0 {
			return i
		}
		return len(blockOrder)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	out := make([]taskfile.Field, len(keys))
	for i, k := range keys {
		out[i] = taskfile.Field{Key: k, Value: m[k]}
	}
	return out
}

// checkTaskFile refuses to loop over a task file that cannot be read as
// one (its heading gone, a mangled line): the file is kept aside for a
// person, a fresh one takes its place, and the error names the file and
// line. A missing file is written afresh.
func checkTaskFile(t Task, now time.Time) error {
	data, err := readTaskFile(t.File)
	if errors.Is(err, fs.ErrNotExist) {
		return writeTaskFile(t.File, taskfile.New(t.Title, t.Session, t.CreatedAt))
	}
	if err != nil {
		return err
	}
	if _, perr := taskfile.Parse(t.File, data); perr != nil {
		aside := fmt.Sprintf("%s.corrupt-%s", t.File, now.UTC().Format("20060102T150405Z"))
		if err := os.Rename(t.File, aside); err != nil {
			return fmt.Errorf("%w (and keeping it aside failed: %v)", perr, err)
		}
		if err := writeTaskFile(t.File, taskfile.New(t.Title, t.Session, t.CreatedAt)); err != nil {
			return err
		}
		return fmt.Errorf("%w; kept aside as %s and a fresh task file written: fix or copy back its checklist, then ralph task loop %s", perr, filepath.Base(aside), t.Session)
	}
	return nil
}

// controller carries the API's requests to one running loop (engine
// Controller). In memory: a request for a loop that is not running is
// applied to the stored task directly.
type controller struct {
	mu  sync.Mutex
	req control.Request
	// stopped is closed when a stop is asked: a loop waiting outside the
	// engine (hold.go) hears of it at once, without polling.
	stopped chan struct{}
}

// stopAsked is closed once a stop is asked (now or later).
func (c *controller) stopAsked() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped == nil {
		c.stopped = make(chan struct{})
		if c.req.Stop {
			close(c.stopped)
		}
	}
	return c.stopped
}

func (c *controller) Read() (control.Request, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.req, nil
}

func (c *controller) ClearStop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req.Stop, c.req.StopBy = false, ""
	c.stopped = nil // the next stop closes a new one
	return nil
}

func (c *controller) ClearReset(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.req.ResetID == id {
		c.req.ResetID, c.req.ResetBy, c.req.ResetWhy = "", "", ""
	}
	return nil
}

func (c *controller) stop(by string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req.Stop, c.req.StopBy = true, by
	if c.stopped != nil {
		select {
		case <-c.stopped:
		default:
			close(c.stopped)
		}
	}
}

func (c *controller) reset(id, by, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req.ResetID, c.req.ResetBy, c.req.ResetWhy = id, by, why
}

// answer hands a person's answer to the loop waiting for it (the engine,
// or a Temporal workflow through its control signal).
func (c *controller) answer(text, by string, to, loops int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.req.Answer, c.req.AnswerBy, c.req.AnswerTo, c.req.AnswerLoops = text, by, to, loops
}

// answers reports an answer to the question of call to, not yet taken.
func (c *controller) answers(to int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.req.Answer != "" && c.req.AnswerTo == to
}

// ClearAnswer forgets the answer to the question of call to once the loop
// has taken it (its state holds it now).
func (c *controller) ClearAnswer(to int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.req.AnswerTo == to {
		c.req.Answer, c.req.AnswerBy, c.req.AnswerTo, c.req.AnswerLoops = "", "", 0, 0
	}
	return nil
}

// prompt is what the agent is told on every call of a task's loop. The
// project's own PROMPT.md comes along for its ways of working (build,
// tests, style, commits), not its workflow: a task's work is its checklist,
// not fix_plan.md. answers are the person's answers so far, also in the
// task file: in the prompt, the call cannot miss them.
func prompt(title, taskFile, projectPrompt, answers string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task: %s\n\n", title)
	fmt.Fprintf(&b, "Your task file is %s.\n\n", taskFile)
	b.WriteString(`1. If its "## Checklist" section has no items yet, break the task into small,
   concrete steps there, one "- [ ] step" line each.
2. Work on the first unchecked item. When it is finished, tick it ("- [x]") in the task file.
3. If a "## Answers" section is present, it holds answers to questions you asked: follow them.
4. Leave the "**Status:**" line and the "## RALPH_STATUS" section alone: ralph rewrites them.
5. If you cannot go on without a person's decision, ask instead of guessing: with the ask
   tool of the ralph MCP server when you have it (the mcp__ralph__ask tool; mcp_ralph_ask or
   ralph_ask in some CLIs, or found by searching your deferred tools for it), whose result is
   the answer, and you go on; otherwise with a CLARITY_STATUS block (CLARIFICATION_NEEDED:
   true and your questions).
6. End every answer with a status block:

---RALPH_STATUS---
STATUS: IN_PROGRESS | COMPLETE | BLOCKED
EXIT_SIGNAL: false | true   (true only when every checklist item is ticked)
WORK_TYPE: IMPLEMENTATION | TESTING | DOCUMENTATION | REFACTORING
FILES_MODIFIED: N
TASKS_REMAINING: N
---END_RALPH_STATUS---
`)
	if answers = strings.TrimSpace(answers); answers != "" {
		b.WriteString("\n## Answers to your questions\n\nThe person answered (also in the task file's \"## Answers\"):\n\n")
		b.WriteString(answers + "\n")
	}
	if projectPrompt = strings.TrimSpace(projectPrompt); projectPrompt != "" {
		b.WriteString("\n## The project's own instructions\n\nFrom the project's .ralph/PROMPT.md: follow its ways of working " +
			"(how to build, test, style, commit), but your work is this task and its checklist, not fix_plan.md.\n\n")
		b.WriteString(projectPrompt + "\n")
	}
	return b.String()
}

// answersOf is the "## Answers" section of a task file, the last
// maxPromptAnswers bytes of it.
func answersOf(taskFile []byte) string {
	s := string(taskFile)
	i := strings.Index(s, "\n## Answers\n")
	if i < 0 {
		return ""
	}
	a := strings.TrimSpace(s[i+len("\n## Answers\n"):])
	if len(a) > maxPromptAnswers {
		a = "…" + a[len(a)-maxPromptAnswers:]
	}
	return a
}

// maxPromptAnswers bounds the answers a prompt repeats; the task file
// keeps them all.
const maxPromptAnswers = 8 << 10

// projectPrompt is the session's .ralph/PROMPT.md, read as every file a
// repository supplies is read (confined, never through a link, capped);
// "" when there is none or it cannot be read.
func projectPrompt(dir string) string {
	b, err := store.ReadIn(dir, filepath.Join(dir, ".ralph", "PROMPT.md"), store.MaxPromptSize)
	if err != nil {
		return ""
	}
	return string(b)
}
