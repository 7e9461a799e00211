// Package sandbox confines the agent process. With bubblewrap (Linux) the
// agent sees the whole file system read-only, the project directory and its
// own configuration directory writable, an empty home directory (so ~/.ssh,
// ~/.aws and other projects are out of reach), a private /tmp and its own
// process namespace; the network is shared unless cut off.
//
// The sandbox is a wrapper around the agent's argv, applied by the runner:
// the wrapper is the process group leader, so process-group signals,
// timeouts and output capture work as without it. It never uses a new
// session (setsid), which would take the agent out of that group.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"ralph/internal/agent"
)

// Providers.
const (
	None   = ""
	Bwrap  = "bwrap"
	Docker = "docker"
	Podman = "podman"
	E2B    = "e2b"
)

// Network modes.
const (
	NetworkOn   = "on"   // the agent reaches its API (default)
	NetworkNone = "none" // no network at all (a local model, or offline work)
)

// Spec is the sandbox the user asked for.
type Spec struct {
	Provider string
	Network  string // NetworkOn or NetworkNone; "" is NetworkOn
	// Agent names the agent (claude, codex…), whose own configuration and
	// credential directories stay writable.
	Agent string
	// Hide are files and directories the agent must not see at all:
	// ralph's home (RALPH_HOME: the API token, the database, serve.conf),
	// the trust store, TLS keys and credential files it was given. A
	// directory becomes an empty tmpfs, a file an empty one; what the
	// agent works in (the project, a request's git directory) is bound
	// again on top.
	Hide []string
}

// Sandbox is a usable sandbox: Wrap turns an agent argv into the argv that
// runs it confined.
type Sandbox struct {
	Spec
	Bwrap   string // absolute path of bwrap
	Version string
}

// Describe is a one-line account of the sandbox for doctor and start-up.
func (s *Sandbox) Describe() string {
	if s == nil {
		return "none: the agent runs with your user's full access"
	}
	if s.Own() {
		return s.describeAgent()
	}
	net := "network on"
	if s.Network == NetworkNone {
		net = "no network"
	}
	return fmt.Sprintf("bwrap (%s): project writable, its git configuration and hooks read-only, rest read-only, "+
		"home and ralph's own files hidden, private /tmp, %s", s.Version, net)
}

// Open checks that the requested sandbox can be used and returns it; nil
// with no error for Provider None. A provider that cannot run here is an
// error: ralph never falls back to running the agent unconfined.
func Open(ctx context.Context, spec Spec) (*Sandbox, error) {
	switch spec.Network {
	case "", NetworkOn, NetworkNone:
	default:
		return nil, fmt.Errorf("SANDBOX_NETWORK=%q: want on or none", spec.Network)
	}
	switch spec.Provider {
	case None:
		return nil, nil
	case Bwrap:
		return openBwrap(ctx, spec)
	case Agent:
		return openAgent(spec)
	case Docker, Podman:
		return nil, containerRefusal(ctx, spec.Provider)
	case E2B:
		return nil, errors.New("SANDBOX_PROVIDER=e2b is not supported by ralph; use bwrap (Linux), " +
			"or unset it to run the agent unsandboxed")
	}
	return nil, fmt.Errorf("SANDBOX_PROVIDER=%q: want bwrap, agent, docker or podman", spec.Provider)
}

func openBwrap(ctx context.Context, spec Spec) (*Sandbox, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("SANDBOX_PROVIDER=bwrap needs Linux (bubblewrap); this is %s: SANDBOX_PROVIDER=agent uses the agent's own sandbox (claude, codex)", runtime.GOOS)
	}
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("SANDBOX_PROVIDER=bwrap: bwrap not found; install bubblewrap " +
			"(Debian/Ubuntu: apt-get install bubblewrap)")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("SANDBOX_PROVIDER=bwrap: %s --version: %v", path, err)
	}
	s := &Sandbox{Spec: spec, Bwrap: path, Version: strings.TrimSpace(strings.TrimPrefix(string(out), "bubblewrap "))}
	// A trial run finds a kernel without unprivileged user namespaces now,
	// with a clear message, instead of at the first agent call.
	trial, err := os.MkdirTemp("", "ralph-sandbox-trial-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(trial)
	argv, err := s.Wrap([]string{"true"}, trial, nil)
	if err != nil {
		return nil, err
	}
	if msg, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("SANDBOX_PROVIDER=bwrap: bubblewrap cannot create a sandbox here: %v: %s "+
			"(unprivileged user namespaces may be disabled)", err, strings.TrimSpace(string(msg)))
	}
	return s, nil
}

// containerRefusal explains why a container sandbox is not used: ralph
// does not run agents in containers yet, and says whether the daemon would
// even be reachable, so the user knows what to change.
func containerRefusal(ctx context.Context, provider string) error {
	bin, err := exec.LookPath(provider)
	if err != nil {
		return fmt.Errorf("SANDBOX_PROVIDER=%s: %s is not installed; ralph will not run the agent unsandboxed "+
			"(use SANDBOX_PROVIDER=bwrap on Linux or agent for claude and codex, or unset it)", provider, provider)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, bin, "info").Run(); err != nil {
		return fmt.Errorf("SANDBOX_PROVIDER=%s: no %s daemon is reachable (%s info: %v); ralph will not run "+
			"the agent unsandboxed (start the daemon, use SANDBOX_PROVIDER=bwrap on Linux or agent for claude and codex, or unset it)",
			provider, provider, provider, err)
	}
	return fmt.Errorf("SANDBOX_PROVIDER=%s: container sandboxes are not supported yet; use SANDBOX_PROVIDER=bwrap "+
		"on Linux or agent for claude and codex, or unset it", provider)
}

// gitFiles are git's own settings under the home directory.
var gitFiles = []string{".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes"}

// agentDirs are each agent's own configuration and credential locations
// under the home directory, and the environment variables that move them.
var agentDirs = map[string]struct {
	home []string
	env  []string
}{
	"claude":   {home: []string{".claude", ".claude.json"}, env: []string{"CLAUDE_CONFIG_DIR"}},
	"codex":    {home: []string{".codex"}, env: []string{"CODEX_HOME"}},
	"gemini":   {home: []string{".gemini"}, env: []string{"GEMINI_CLI_HOME"}},
	"opencode": {home: []string{".config/opencode", ".local/share/opencode", ".local/state/opencode", ".cache/opencode"}},
}

// Wrap returns the bwrap argv that runs argv in dir, confined. env is the
// agent's environment (later entries win): its HOME, TMPDIR and the
// variables that relocate the agent's configuration decide what is bound.
// share are files outside dir the agent works on (a daemon's task file in
// the hidden RALPH_HOME): bound writable, one by one.
func (s *Sandbox) Wrap(argv []string, dir string, env []string, share ...string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return os.Getenv(k)
	}
	project, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	w := []string{s.Bwrap,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts",
		// If ralph dies, the sandbox's init dies and takes every process
		// in it along: nothing of the agent outlives a kill -9 of ralph.
		"--die-with-parent",
	}
	if s.Network == NetworkNone {
		w = append(w, "--unshare-net")
	}
	hidden := []string{"/tmp"}
	home := get("HOME")
	if home != "" && (home == project || under(home, project)) {
		// Binding the project writable would bring back all it hides.
		return nil, fmt.Errorf("sandbox: the project directory %s contains your home directory; "+
			"run ralph in the project's own directory", project)
	}
	if home != "" && home != "/" {
		w = append(w, "--tmpfs", home) // ~/.ssh, ~/.aws, other projects: gone
		hidden = append(hidden, home)
	}
	// ralph's own files; those that hold the project go first, so that
	// the project and what the agent needs are bound again on top.
	before, after := s.hideArgs(project)
	w = append(w, before...)
	// The runner's per-call temp directory and the call's channel to
	// ralph: this call's alone, the others' hidden with their parent.
	// Before what the agent needs is bound, which a hidden parent must
	// not cover.
	w = append(w, callDirArgs(project, get("TMPDIR"), get(CallDirEnv))...)
	// The agent's program may live where the sandbox hides things (npm's
	// prefix or nvm under home, a build under /tmp): it stays visible,
	// read-only.
	for _, d := range programDirs(argv[0], get("PATH"), hidden) {
		w = append(w, "--ro-bind", d, d)
	}
	// The gate's bridge, which the agent's CLI starts (ralph itself).
	if b := get(agent.BridgeEnv); filepath.IsAbs(b) {
		for _, d := range programDirs(b, "", hidden) {
			w = append(w, "--ro-bind", d, d)
		}
	}
	if home != "" && home != "/" {
		// The agent commits its work: git needs the user's name and
		// settings. Only those files, read-only (not ~/.git-credentials).
		for _, rel := range gitFiles {
			if p := filepath.Join(home, rel); exists(p) {
				w = append(w, "--ro-bind", p, p)
			}
		}
		for _, rel := range agentDirs[s.Agent].home {
			if p := filepath.Join(home, rel); exists(p) {
				w = append(w, "--bind", p, p)
			}
		}
	}
	for _, k := range agentDirs[s.Agent].env {
		if p := get(k); p != "" && exists(p) {
			w = append(w, "--bind", p, p)
		}
	}
	// After the hiding, so it wins over the tmpfs on home (or RALPH_HOME,
	// for a request) when the project is under it.
	w = append(w, "--bind", project, project)
	w = append(w, after...)
	for _, p := range share {
		if filepath.IsAbs(p) && exists(p) {
			w = append(w, "--bind", p, p)
		}
	}
	w = append(w, gitArgs(project)...)
	w = append(w, "--chdir", project, "--")
	return append(w, argv...), nil
}

// programDirs are the directories in hidden places that running argv0
// needs: those of PATH that lie there, and the one holding the resolved
// executable (an npm package's cli.js behind a bin link).
func programDirs(argv0, path string, hidden []string) []string {
	var dirs []string
	add := func(d string) {
		if d == "" || slices.Contains(dirs, d) || !exists(d) {
			return
		}
		for _, h := range hidden {
			if under(d, h) {
				dirs = append(dirs, packageRoot(d, h))
				return
			}
		}
	}
	for _, d := range filepath.SplitList(path) {
		add(d)
	}
	exe := argv0
	if !strings.ContainsRune(exe, '/') {
		if p, err := exec.LookPath(exe); err == nil {
			exe = p
		}
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		add(filepath.Dir(real))
	}
	return dirs
}

// packageRoot walks up from dir to the nearest directory with a
// package.json (the npm package an executable belongs to), staying below
// top; dir itself when there is none.
func packageRoot(dir, top string) string {
	// An npm CLI may run files of its sibling packages (Claude Code's
	// launcher runs the platform package's binary): inside node_modules,
	// the outermost node_modules below top is what it needs.
	var modules string
	for d := dir; under(d, top); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			modules = d
		}
	}
	if modules != "" {
		return modules
	}
	for d := dir; under(d, top); d = filepath.Dir(d) {
		if exists(filepath.Join(d, "package.json")) {
			return d
		}
	}
	return dir
}

func under(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
