package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"ralph/internal/config"
	"ralph/internal/gitx"
	"ralph/internal/proc"
	"ralph/internal/store"
)

func TestCheckConfig(t *testing.T) {
	dir := filepath.Join(string(filepath.Separator)+"proj", "x")
	rc := filepath.Join(dir, ".ralphrc")
	tests := []struct {
		name      string
		warnings  []string
		err       error
		status    Status
		fragments []string
		absent    string
	}{
		{name: "clean", status: OK, fragments: []string{"no warnings"}},
		{name: "unknown key with file and line", warnings: []string{rc + `:3: unknown key MAX_CALS (did you mean MAX_CALLS_PER_HOUR?)`},
			status: Warn, fragments: []string{".ralphrc:3: unknown key MAX_CALS", "did you mean"}, absent: dir},
		{name: "bad value blocks", err: errors.Join(errors.New(rc+`:4: MAX_CALLS_PER_HOUR: "abc" is not a whole number`), errors.New(`env RALPH_MAX_LOOPS: "x" is not a whole number`)),
			warnings: []string{rc + ":1: unknown key FOO"}, status: Fail,
			fragments: []string{"would refuse to start", `.ralphrc:4: MAX_CALLS_PER_HOUR: "abc"`, "env RALPH_MAX_LOOPS", ".ralphrc:1: unknown key FOO"}},
		{name: "many warnings are bounded", warnings: []string{"a", "b", "c", "d", "e", "f", "g"}, status: Warn, fragments: []string{"a; b; c; d; e; and 2 more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkConfig(Project{Dir: dir, Config: config.Defaults(), ConfigWarnings: tt.warnings, ConfigErr: tt.err})
			want(t, c, NameConfig, tt.status, tt.fragments...)
			if tt.absent != "" && strings.Contains(c.Detail, tt.absent) {
				t.Errorf("detail %q shows the full path %q", c.Detail, tt.absent)
			}
		})
	}
}

func TestCheckProjectLayout(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		noRalph   bool
		status    Status
		fragments []string
		more      bool // the checks after layout are reported
	}{
		{name: "healthy", status: OK, fragments: []string{".ralph/"}, more: true},
		{name: "flat layout", noRalph: true, files: map[string]string{"@fix_plan.md": "- [ ] a\n", "PROMPT.md": "x"},
			status: Fail, fragments: []string{"old flat layout", "ralph migrate"}},
		{name: "flat layout with plain names", noRalph: true, files: map[string]string{"fix_plan.md": "- [ ] a\n"},
			status: Fail, fragments: []string{"fix_plan.md at the top level", "ralph migrate"}},
		{name: "not a project", noRalph: true, status: Fail, fragments: []string{"not a ralph project", "ralph enable"}},
		{name: ".ralph is a file", noRalph: true, files: map[string]string{".ralph": "oops"}, status: Fail, fragments: []string{"not a directory"}},
		{name: "leftovers next to .ralph", files: map[string]string{"@AGENT.md": "x"}, status: Warn, fragments: []string{"@AGENT.md", "ignored"}, more: true},
		{name: "own PROMPT.md next to .ralph is fine", files: map[string]string{"PROMPT.md": "x"}, status: OK, more: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dir string
			if tt.noRalph {
				dir = t.TempDir()
				for name, content := range tt.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				dir = project(t, healthyPlan, tt.files)
			}
			cs := checkProject(defaultProject(dir), healthyEnv())
			want(t, cs[0], NameLayout, tt.status, tt.fragments...)
			if got := len(cs) > 1; got != tt.more {
				t.Errorf("later checks reported = %v (%v), want %v", got, cs, tt.more)
			}
		})
	}
}

func TestCheckProjectRelocatedRalphDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"PROMPT.md", "fix_plan.md", "AGENT.md"} {
		p := filepath.Join(dir, "state", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("- [ ] a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := defaultProject(dir)
	p.Config.RalphDir = "state"
	cs := checkProject(p, healthyEnv())
	want(t, cs[0], NameLayout, OK, "state/")
	want(t, cs[1], NameFiles, OK, "state/PROMPT.md")
}

func TestCheckFiles(t *testing.T) {
	tests := []struct {
		name      string
		remove    []string
		status    Status
		fragments []string
	}{
		{name: "all there", status: OK, fragments: []string{".ralph/PROMPT.md, .ralph/fix_plan.md, .ralph/AGENT.md"}},
		{name: "one missing", remove: []string{"AGENT.md"}, status: Fail, fragments: []string{"missing: .ralph/AGENT.md"}},
		{name: "every missing one named", remove: []string{"PROMPT.md", "fix_plan.md"}, status: Fail, fragments: []string{".ralph/PROMPT.md", ".ralph/fix_plan.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := project(t, healthyPlan, nil)
			for _, name := range tt.remove {
				if err := os.Remove(filepath.Join(dir, ".ralph", name)); err != nil {
					t.Fatal(err)
				}
			}
			cs := checkProject(defaultProject(dir), healthyEnv())
			c, _ := find(Report{Checks: cs}, NameFiles)
			want(t, c, NameFiles, tt.status, tt.fragments...)
		})
	}
}

func TestCheckPlan(t *testing.T) {
	tests := []struct {
		name      string
		plan      string
		optional  []string
		status    Status
		fragments []string
		absent    bool
	}{
		{name: "work left", plan: healthyPlan, status: OK, fragments: []string{"3 tasks, 1 done, 1 open (+1 optional)", `next: "Add login"`}},
		{name: "complete", plan: "- [x] a\n## Optional\n- [ ] b\n", status: Warn, fragments: []string{"plan_complete"}},
		{name: "no optional sections makes it incomplete", plan: "- [x] a\n## Optional\n- [ ] b\n", optional: []string{}, status: OK, fragments: []string{"1 open"}},
		{name: "empty", plan: "# Plan\n\nnothing here\n", status: Warn, fragments: []string{"0 tasks", "never be complete"}},
		{name: "warnings with line numbers", plan: "# Plan\n- [ ] a\n- [] b\n", status: Warn, fragments: []string{".ralph/fix_plan.md line 3:"}},
		{name: "missing is left to files", plan: "", absent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := defaultProject(project(t, tt.plan, nil))
			if tt.optional != nil {
				p.Config.OptionalSections = tt.optional
			}
			c, ok := find(Report{Checks: checkProject(p, healthyEnv())}, NamePlan)
			if ok == tt.absent {
				t.Fatalf("plan reported = %v (%+v)", ok, c)
			}
			if ok {
				want(t, c, NamePlan, tt.status, tt.fragments...)
			}
		})
	}
}

func TestCheckState(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		status    Status
		fragments []string
	}{
		{name: "none yet", status: OK, fragments: []string{"no state yet"}},
		{name: "all good", files: map[string]string{
			".ralph/status.json":            `{"loop_count": 3, "status": "stopped"}`,
			".ralph/.circuit_breaker_state": `{"state": "CLOSED"}`,
			".ralph/.rate_limit_state":      `{"calls": []}`,
			".ralph/.loop_state":            `{"loop_count": 3}`,
		}, status: OK, fragments: []string{"4 state files read"}},
		{name: "corrupt breaker with line and fix", files: map[string]string{
			".ralph/.circuit_breaker_state": "{\n  \"state\": \"OPEN\",\n  \"consecutive_no_progress\":\n",
		}, status: Warn, fragments: []string{".ralph/.circuit_breaker_state:3: corrupt", "ralph circuit reset"}},
		{name: "breaker that makes no sense", files: map[string]string{
			".ralph/.circuit_breaker_state": `{"state": "SIDEWAYS"}`,
		}, status: Warn, fragments: []string{".ralph/.circuit_breaker_state: corrupt", "SIDEWAYS"}},
		{name: "corrupt status", files: map[string]string{".ralph/status.json": "{"}, status: Warn,
			fragments: []string{".ralph/status.json:1: corrupt", "rewrites it"}},
		{name: "corrupt rate limit and loop state", files: map[string]string{
			".ralph/.rate_limit_state": `{"calls": 3}`,
			".ralph/.loop_state":       `[1, 2`,
		}, status: Warn, fragments: []string{".ralph/.rate_limit_state:1: corrupt", "hour's calls afresh", ".ralph/.loop_state:1: corrupt", "rebuilds it from the breaker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := project(t, healthyPlan, tt.files)
			c, _ := find(Report{Checks: checkProject(defaultProject(dir), healthyEnv())}, NameState)
			want(t, c, NameState, tt.status, tt.fragments...)
		})
	}
}

// breakerFile renders a valid .circuit_breaker_state.
func breakerFile(state string, openedAt time.Time) string {
	if state != "OPEN" {
		return fmt.Sprintf(`{"state": %q}`, state)
	}
	return fmt.Sprintf(`{"state": "OPEN", "opened_at": %q, "reason_code": "no_progress", "reason": "no progress in 3 loops", "total_opens": 1}`,
		openedAt.Format(time.RFC3339))
}

func TestCheckBreaker(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		autoReset bool
		status    Status
		fragments []string
		absent    bool
	}{
		{name: "no state", status: OK, fragments: []string{"CLOSED (no state yet)"}},
		{name: "closed", file: breakerFile("CLOSED", time.Time{}), status: OK, fragments: []string{"CLOSED"}},
		{name: "half open", file: breakerFile("HALF_OPEN", time.Time{}), status: OK, fragments: []string{"HALF_OPEN"}},
		{name: "open, cooling down", file: breakerFile("OPEN", testNow.Add(-10*time.Minute)), status: Warn,
			fragments: []string{"OPEN: no progress in 3 loops", "half-opens at", "(in 20m)", "ralph circuit reset"}},
		{name: "open, cooldown over", file: breakerFile("OPEN", testNow.Add(-time.Hour)), status: Warn, fragments: []string{"cooldown is over"}},
		{name: "open, auto reset", file: breakerFile("OPEN", testNow), autoReset: true, status: Warn, fragments: []string{"CB_AUTO_RESET"}},
		{name: "open, time unknown", file: `{"state": "OPEN", "total_opens": 2}`, status: Warn, fragments: []string{"`ralph circuit reset` closes it"}},
		{name: "corrupt is left to state", file: "{", absent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files map[string]string
			if tt.file != "" {
				files = map[string]string{".ralph/.circuit_breaker_state": tt.file}
			}
			p := defaultProject(project(t, healthyPlan, files))
			p.Config.Breaker.AutoReset = tt.autoReset
			c, ok := find(Report{Checks: checkProject(p, healthyEnv())}, NameBreaker)
			if ok == tt.absent {
				t.Fatalf("breaker reported = %v (%+v)", ok, c)
			}
			if ok {
				want(t, c, NameBreaker, tt.status, tt.fragments...)
			}
		})
	}
}

func TestCheckLock(t *testing.T) {
	tests := []struct {
		name      string
		content   string // "" = no lock file
		alive     bool
		status    Status
		fragments []string
	}{
		{name: "no lock", status: OK, fragments: []string{"no run in progress"}},
		{name: "held", content: "4242\n", alive: true, status: Warn, fragments: []string{"held by pid 4242", "would refuse"}},
		{name: "held by a daemon", content: "4242\nralph serve (RALPH_HOME /srv/r, pid 4242), session api, task t7\n", alive: true, status: Warn,
			fragments: []string{"held by pid 4242: ralph serve (RALPH_HOME /srv/r, pid 4242), session api, task t7 is active", "would refuse"}},
		{name: "stale", content: "4242\n", status: OK, fragments: []string{"stale lock of pid 4242", "takes it over"}},
		{name: "no pid", content: "\n", status: OK, fragments: []string{"without a pid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			if tt.content != "" {
				files[".ralph/"+store.LockName] = tt.content
			}
			env := healthyEnv()
			var asked int
			env.ProcessAlive = func(pid int) bool { asked = pid; return tt.alive }
			dir := project(t, healthyPlan, files)
			c, _ := find(Report{Checks: checkProject(defaultProject(dir), env)}, NameLock)
			want(t, c, NameLock, tt.status, tt.fragments...)
			if strings.Contains(tt.content, "4242") && asked != 4242 {
				t.Errorf("asked about pid %d", asked)
			}
			// Looking must not take the lock or remove a stale file.
			_, err := os.Stat(filepath.Join(dir, ".ralph", store.LockName))
			if exists := err == nil; exists != (tt.content != "") {
				t.Errorf("lock file exists = %v after the check", exists)
			}
		})
	}
}

func TestCheckLockHeldForReal(t *testing.T) {
	dir := project(t, healthyPlan, nil)
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := st.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	env := healthyEnv()
	env.ProcessAlive = proc.Alive
	c := checkLock(st, env)
	want(t, c, NameLock, Warn, "held by pid "+strconv.Itoa(os.Getpid()))
}

func TestRoughDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		20 * time.Second:                "under a minute",
		20 * time.Minute:                "20m",
		2*time.Hour + 5*time.Minute:     "2h 5m",
		50*time.Hour + 59*time.Minute:   "2d 2h",
		29*time.Minute + 45*time.Second: "30m",
	} {
		if got := roughDuration(d); got != want {
			t.Errorf("roughDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCheckGitIdentity(t *testing.T) {
	env := healthyEnv()
	if c := checkGitIdentity(context.Background(), t.TempDir(), env); c.Status != OK || !strings.Contains(c.Detail, "T <t@example.com>") {
		t.Errorf("with an identity: %+v", c)
	}
	env.Git.Identity = func(context.Context, string) (string, error) { return "", gitx.ErrNoIdentity }
	if c := checkGitIdentity(context.Background(), t.TempDir(), env); c.Status != Warn || !strings.Contains(c.Detail, "commits will fail") ||
		!strings.Contains(c.Detail, "user.email") {
		t.Errorf("without: %+v", c)
	}
}
