// Package doctor is `ralph doctor`'s preflight: it looks at the machine and
// the project the way `ralph run` is about to, and says in one line per check
// what is fine, what deserves a look and what would stop a run.
//
// The checks are functions over a Project (the directory and its resolved
// configuration) and an Env (everything they learn about the machine: the
// environment, PATH, child processes, git, disk space, other processes).
// System returns the real Env; tests pass fakes, so every outcome of every
// check is covered without the machine having — or lacking — a claude
// binary, a login or a full disk. Files inside the project directory are read
// directly: a temporary directory is a cheaper fake for those than any
// interface.
//
// A check never changes anything: it does not take the run lock, move a
// corrupt file aside or reset the breaker. It only says which command would.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"ralph/internal/agent/agents"
	"ralph/internal/config"
)

// Status is a check's verdict.
type Status string

const (
	// OK: nothing to do.
	OK Status = "ok"
	// Warn: worth a look, but `ralph run` would start and work.
	Warn Status = "warn"
	// Fail: `ralph run` would refuse to start or could not do its job.
	Fail Status = "fail"
)

// Check is one line of the report. Detail names files, keys and commands
// but never a secret's value.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Report is the whole preflight, in the order the checks ran. Its JSON form
// is `ralph doctor --json`'s contract: {checks: [{name, status, detail}],
// blocking}.
type Report struct {
	Checks   []Check `json:"checks"`
	Blocking bool    `json:"blocking"` // some check failed: a run would not go well
}

// Count returns how many checks ended with status s.
func (r Report) Count(s Status) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

func (r *Report) add(c Check) {
	r.Checks = append(r.Checks, c)
	if c.Status == Fail {
		r.Blocking = true
	}
}

// Project is what the checks examine: the project directory and its
// configuration as `ralph run` would resolve it.
type Project struct {
	Dir    string        // absolute project directory
	Config config.Config // resolved; with ConfigErr set it still holds every good value
	// ConfigWarnings are the reader's and resolver's warnings, one per line,
	// each starting with its source (".ralphrc:4: ...").
	ConfigWarnings []string
	// ConfigErr is why ralph would refuse the configuration (bad values, an
	// unreadable .ralphrc); nil when it is usable.
	ConfigErr error
	// Untrusted is why ralph would refuse to run what the project's .ralphrc
	// chooses (its message names each setting); doctor then runs nothing
	// that configuration names. nil when nothing needs trust.
	Untrusted error
}

// Env is the machine as the checks see it. Every field must be set; System
// fills them from the real machine.
type Env struct {
	OS        string                          // runtime.GOOS: on macOS a login lives in the Keychain
	Now       func() time.Time                // for "half-opens in 12m"
	LookupEnv func(key string) (string, bool) // ralph's own environment
	HomeDir   func() (string, error)
	LookPath  func(file string) (string, error)
	// Run runs argv directly (no shell) with stdin from /dev/null and
	// returns its combined output; it must give up when ctx ends.
	Run          func(ctx context.Context, argv []string) (string, error)
	Stat         func(path string) (fs.FileInfo, error) // for files outside the project (the login)
	FreeBytes    func(path string) (uint64, error)      // space an unprivileged user may still fill
	ProcessAlive func(pid int) bool
	Git          Git
	// Agents lists the agent CLIs on this machine with their versions.
	Agents func(ctx context.Context) []agents.Found
}

// Git is the little of git the checks need (see package gitx).
type Git struct {
	IsRepo        func(ctx context.Context, dir string) (bool, error)
	Root          func(ctx context.Context, dir string) (string, error)
	IsClean       func(ctx context.Context, dir string) (bool, error)
	CurrentBranch func(ctx context.Context, dir string) (string, error)
	// DirtyPaths lists the paths that are not clean, ralph's own state aside.
	DirtyPaths func(ctx context.Context, dir string) ([]string, error)
	// Identity is who a commit in dir would be signed by (gitx.Identity).
	Identity func(ctx context.Context, dir string) (string, error)
}

// Check names, stable for --json consumers.
const (
	NameConfig       = "config"
	NameLayout       = "layout"
	NameFiles        = "files"
	NamePlan         = "plan"
	NameState        = "state"
	NameBreaker      = "breaker"
	NameLock         = "lock"
	NameAgent        = "agent"
	NameAgentVersion = "agent_version"
	NameFallbacks    = "fallback_agents"
	NameAgents       = "agents"
	NameCredentials  = "credentials"
	NameGit          = "git"
	NameGitIdentity  = "git_identity"
	NameDisk         = "disk"
)

// Run runs every check in a fixed order. A check that depends on an earlier
// one which failed is left out rather than reported as a second, derived
// failure: without .ralph/ there is no plan to parse, without an agent
// executable no version to read.
func Run(ctx context.Context, p Project, env Env) Report {
	var r Report
	r.add(checkConfig(p))
	for _, c := range checkProject(p, env) {
		r.add(c)
	}
	agent, found := checkAgent(p.Config, env)
	if p.Untrusted != nil {
		// Not even --version: running a program the repository chose is
		// exactly what trust is for.
		r.add(Check{Name: NameAgent, Status: Fail, Detail: "not run: " + p.Untrusted.Error()})
		r.add(checkSandbox(ctx, p.Config))
		r.add(checkCredentials(p.Config, env))
		r.add(checkInstalledAgents(ctx, env))
		r.add(checkGit(ctx, p.Dir, env))
		r.add(checkGitIdentity(ctx, p.Dir, env))
		r.add(checkDisk(p.Dir, env))
		return r
	}
	if ve := valueError(p.ConfigErr, "AGENT_CMD"); ve != nil {
		// The resolved config fell back to the default command; checking
		// that one would answer a question nobody asked.
		agent, found = Check{Name: NameAgent, Status: Fail, Detail: "AGENT_CMD is unusable: " + ve.Error()}, nil
	}
	r.add(agent)
	// The agent's program runs in the sandbox the loop would use, or not
	// at all when that sandbox cannot be had.
	sb, sbCheck := openSandbox(ctx, p.Config)
	agentEnv := confined(env, sb, p.Dir)
	if found != nil {
		if sbCheck.Status == Fail {
			r.add(Check{Name: NameAgentVersion, Status: Warn, Detail: "not run: the sandbox asked for cannot be used (see sandbox)"})
		} else {
			r.add(checkAgentVersion(ctx, p.Config, agentEnv, found))
		}
	}
	if c, ok := checkFallbacks(p.Config, env); ok {
		r.add(c)
	}
	r.add(sbCheck)
	cred := checkCredentials(p.Config, env)
	if cred.Status == Warn && found != nil && p.Config.AgentProvider == "claude" && sbCheck.Status != Fail {
		// No key in sight: the CLI itself knows whether a stored login (a
		// file, the macOS Keychain) is there, without a model call.
		cred = claudeLogin(ctx, agentEnv, found, cred)
	}
	r.add(cred)
	r.add(checkVerify(p))
	r.add(checkInstalledAgents(ctx, env))
	r.add(checkGit(ctx, p.Dir, env))
	r.add(checkGitIdentity(ctx, p.Dir, env))
	r.add(checkDisk(p.Dir, env))
	return r
}

// checkConfig reports the configuration's warnings and bad values. Bad
// values block: `ralph run` refuses them.
func checkConfig(p Project) Check {
	c := Check{Name: NameConfig, Status: OK, Detail: "no warnings"}
	// Sources name .ralphrc by its full path; inside the project the
	// relative name is enough and keeps the line short.
	short := func(s string) string { return strings.ReplaceAll(s, p.Dir+string(filepath.Separator), "") }
	if p.ConfigErr != nil {
		c.Status = Fail
		items := append(splitLines(p.ConfigErr.Error()), p.ConfigWarnings...)
		c.Detail = "ralph would refuse to start: " + short(listOf(items, 5))
		return c
	}
	if len(p.ConfigWarnings) > 0 {
		c.Status = Warn
		c.Detail = short(listOf(p.ConfigWarnings, 5))
	}
	return c
}

// valueError finds the bad value of key among the (joined) configuration
// errors.
func valueError(err error, key string) *config.ValueError {
	var ve *config.ValueError
	if errors.As(err, &ve) && ve.Key == key {
		return ve
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if ve := valueError(e, key); ve != nil {
				return ve
			}
		}
	}
	return nil
}

// listOf joins at most max items and says how many were left out, so one
// broken file cannot turn a check into a page.
func listOf(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:max], "; ") + fmt.Sprintf("; and %d more", len(items)-max)
}

func splitLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
