package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/config"
	"ralph/internal/loop"
	"ralph/internal/plan"
	"ralph/internal/ratelimit"
	"ralph/internal/store"
	"ralph/internal/termsafe"
)

// flatNames are the bash tool's top-level files before it moved into .ralph/.
// The '@' names cannot be anything else; PROMPT.md and fix_plan.md only count
// when .ralph/ is missing, since a project may well have its own PROMPT.md.
var flatNames = []string{"PROMPT.md", "@fix_plan.md", "fix_plan.md", "@AGENT.md"}

// checkProject checks the .ralph/ directory: layout, required files, plan,
// state files, breaker and run lock. Without a usable .ralph/ only the
// layout check is reported.
func checkProject(p Project, env Env) []Check {
	st, err := store.OpenWith(p.Dir, store.Options{RalphDir: p.Config.RalphDir, PromptFile: p.Config.PromptFile})
	if err != nil {
		return []Check{{Name: NameLayout, Status: Fail, Detail: err.Error()}}
	}
	layout := checkLayout(p.Dir, st)
	out := []Check{layout}
	if layout.Status == Fail {
		return out
	}
	out = append(out, checkFiles(st))
	if c, ok := checkPlan(st, p.Config); ok {
		out = append(out, c)
	}
	out = append(out, checkState(st))
	if c, ok := checkBreaker(st, p.Config, env.Now()); ok {
		out = append(out, c)
	}
	return append(out, checkLock(st, env))
}

// rel shows path relative to the project directory: shorter, and free of
// the machine's own directory names.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func checkLayout(dir string, st *store.Store) Check {
	c := Check{Name: NameLayout}
	ralphDir := rel(dir, st.RalphDir())
	fi, err := os.Stat(st.RalphDir())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status = Fail
		for _, old := range flatNames {
			if exists(filepath.Join(dir, old)) {
				c.Detail = fmt.Sprintf("old flat layout (%s at the top level): run `ralph migrate` to move it into %s/", old, ralphDir)
				return c
			}
		}
		c.Detail = fmt.Sprintf("not a ralph project: %s/ does not exist (`ralph enable` sets one up)", ralphDir)
		return c
	case err != nil:
		c.Status, c.Detail = Fail, err.Error()
		return c
	case !fi.IsDir():
		c.Status, c.Detail = Fail, ralphDir+" is not a directory"
		return c
	}
	var left []string
	for _, old := range []string{"@fix_plan.md", "@AGENT.md"} {
		if exists(filepath.Join(dir, old)) {
			left = append(left, old)
		}
	}
	if len(left) > 0 {
		c.Status = Warn
		c.Detail = fmt.Sprintf("%s/ is used; %s at the top level are left over from the old layout and ignored", ralphDir, strings.Join(left, ", "))
		return c
	}
	c.Status, c.Detail = OK, ralphDir+"/"
	return c
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// checkFiles is `ralph run`'s integrity check: without these files it
// stops with integrity_failure.
func checkFiles(st *store.Store) Check {
	missing, err := st.RequiredFiles()
	switch {
	case err != nil:
		return Check{Name: NameFiles, Status: Fail, Detail: err.Error()}
	case len(missing) > 0:
		return Check{Name: NameFiles, Status: Fail, Detail: "missing: " + strings.Join(missing, ", ")}
	}
	var names []string
	for _, f := range []string{st.PromptFile(), st.FixPlanFile(), st.AgentFile()} {
		names = append(names, rel(st.ProjectDir(), f))
	}
	return Check{Name: NameFiles, Status: OK, Detail: strings.Join(names, ", ")}
}

// checkPlan parses fix_plan.md with the configured optional sections. A plan
// that is already complete, or has no tasks, is a warning: the first stops
// the run before any call, the second can never be complete.
func checkPlan(st *store.Store, cfg config.Config) (Check, bool) {
	name := rel(st.ProjectDir(), st.FixPlanFile())
	pl, err := store.LoadPlan(st.ProjectDir(), st.FixPlanFile(), plan.Options{OptionalSections: cfg.OptionalSections})
	if errors.Is(err, fs.ErrNotExist) || store.IsReadRefusal(err) {
		return Check{}, false // checkFiles has said it
	}
	if err != nil {
		return Check{Name: NamePlan, Status: Fail, Detail: err.Error()}, true
	}
	n := pl.Counts()
	c := Check{Name: NamePlan, Status: OK}
	c.Detail = fmt.Sprintf("%s: %s, %d done, %d open", name, plural(n.Total, "task"), n.Done, n.OpenRequired)
	if n.OpenOptional > 0 {
		c.Detail += fmt.Sprintf(" (+%d optional)", n.OpenOptional)
	}
	if next := pl.NextOpen(); next != nil {
		c.Detail += fmt.Sprintf("; next: %q", next.Text)
	}
	var notes []string
	switch {
	case n.Total == 0:
		notes = append(notes, "no `- [ ]` tasks: the plan can never be complete, only the agent can say it is done")
	case pl.Complete():
		notes = append(notes, "every required task is checked: `ralph run` would stop at once (plan_complete)")
	}
	for _, w := range pl.Warnings {
		notes = append(notes, name+" "+w.String())
	}
	if len(notes) > 0 {
		c.Status = Warn
		c.Detail += "; " + listOf(notes, 5)
	}
	return c, true
}

// stateFile is one JSON state file and the way to repair it.
type stateFile struct {
	path string
	read func(path string) error // decode and validate
	fix  string
}

func stateFiles(st *store.Store) []stateFile {
	return []stateFile{
		{st.StatusFile(), func(p string) error { _, err := store.ReadStatus(p); return err },
			"the next `ralph run` rewrites it"},
		{st.BreakerFile(), readValid[breaker.State],
			"`ralph circuit reset` replaces it"},
		{st.RateLimitFile(), readValid[ratelimit.State],
			"the next `ralph run` sets it aside and counts this hour's calls afresh"},
		{st.LoopStateFile(), readValid[loop.State],
			"the next `ralph run` sets it aside and rebuilds it from the breaker and rate-limit files"},
	}
}

// readValid decodes the file at path as a T and validates it, the way the
// loop does before trusting it; a value that decodes but makes no sense is
// as corrupt as one that does not decode.
func readValid[T interface{ Validate() error }](path string) error {
	var v T
	if err := store.ReadJSON(path, &v); err != nil {
		return err
	}
	if err := v.Validate(); err != nil {
		return &store.CorruptError{Path: path, Err: err}
	}
	return nil
}

// checkState reads the state files the way `ralph run` will. A corrupt one
// is a warning, not a failure: the run sets it aside and starts it afresh,
// but the user may want to look first, or repair it by hand.
func checkState(st *store.Store) Check {
	var bad []string
	read := 0
	for _, f := range stateFiles(st) {
		err := f.read(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		read++
		if err == nil {
			continue
		}
		name := rel(st.ProjectDir(), f.path)
		var ce *store.CorruptError
		if errors.As(err, &ce) {
			where := name
			if ce.Line > 0 {
				where += ":" + strconv.Itoa(ce.Line)
			}
			bad = append(bad, fmt.Sprintf("%s: corrupt (%v): %s", where, ce.Err, f.fix))
			continue
		}
		bad = append(bad, fmt.Sprintf("%s: %v", name, err))
	}
	switch {
	case len(bad) > 0:
		return Check{Name: NameState, Status: Warn, Detail: listOf(bad, 4)}
	case read == 0:
		return Check{Name: NameState, Status: OK, Detail: "no state yet (first run)"}
	}
	return Check{Name: NameState, Status: OK, Detail: plural(read, "state file") + " read"}
}

// checkBreaker reports an open circuit breaker and when the next run may
// try again. It is only a warning: the cooldown or `ralph circuit reset`
// clears it, and a user may have opened doctor precisely to learn that.
func checkBreaker(st *store.Store, cfg config.Config, now time.Time) (Check, bool) {
	var b breaker.State
	err := store.ReadJSON(st.BreakerFile(), &b)
	if errors.Is(err, fs.ErrNotExist) {
		return Check{Name: NameBreaker, Status: OK, Detail: "CLOSED (no state yet)"}, true
	}
	if err != nil || b.Validate() != nil {
		return Check{}, false // checkState has said it
	}
	c := Check{Name: NameBreaker, Status: OK, Detail: string(b.Status)}
	if b.Message != "" {
		c.Detail += ": " + b.Message
	}
	if b.Status != breaker.Open {
		return c, true
	}
	c.Status = Warn
	switch at := b.ResumeAt(breaker.Thresholds{Cooldown: cfg.Breaker.Cooldown}); {
	case cfg.Breaker.AutoReset:
		c.Detail += "; CB_AUTO_RESET closes it when the next run starts"
	case at.IsZero():
		c.Detail += "; `ralph circuit reset` closes it"
	case !at.After(now):
		c.Detail += "; its cooldown is over: the next run tries one HALF_OPEN iteration (or `ralph circuit reset`)"
	default:
		c.Detail += fmt.Sprintf("; half-opens at %s (in %s), or `ralph circuit reset` now",
			at.Local().Format(time.RFC3339), roughDuration(at.Sub(now)))
	}
	return c, true
}

// checkLock looks at the run lock without taking it: taking it, even for a
// moment, could make a `ralph run` starting at that instant refuse. The lock
// file is removed on release, so one that exists belongs to a running ralph
// or to one that died; the pid inside tells which.
func checkLock(st *store.Store, env Env) Check {
	c := Check{Name: NameLock, Status: OK}
	data, err := os.ReadFile(st.LockFile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Detail = "no run in progress"
		return c
	case err != nil:
		c.Status, c.Detail = Warn, err.Error()
		return c
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	holder, _, _ := strings.Cut(rest, "\n")
	holder = strings.TrimSpace(holder)
	if holder == "" {
		holder = "a `ralph run`" // one that did not name itself
	}
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	switch {
	case err != nil || pid <= 0:
		c.Detail = "lock file without a pid (a ralph starting, or one that died); a run takes it over if nobody holds it"
	case env.ProcessAlive(pid):
		c.Status = Warn
		c.Detail = fmt.Sprintf("held by pid %d: %s is active in this project, a `ralph run` would refuse", pid, termsafe.String(holder))
	default:
		c.Detail = fmt.Sprintf("stale lock of pid %d, which has exited; the next run takes it over", pid)
	}
	return c
}

// roughDuration says how long in the two largest units ("3d 4h", "2h 5m",
// "12m"): a cooldown is read by a person, not a program.
func roughDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d/time.Hour)%24, int(d/time.Minute)%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh %dm", hours, mins)
	case mins > 0:
		return fmt.Sprintf("%dm", mins)
	}
	return "under a minute"
}
