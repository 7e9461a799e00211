package servetest

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/syncbuf"
)

// Options are how a Daemon differs from the default one.
type Options struct {
	// Token is the daemon's API token (RALPH_API_TOKEN); "" lets it make
	// its own, in RALPH_HOME/api-token.
	Token string
}

// Daemon is a real `ralph serve` (Ralph) on a free 127.0.0.1 port, with
// git sessions whose agent is the scripted fake (Fake), all under one
// temporary directory, and a Client of it. Its output is kept across
// restarts in Log, shown when the test fails; under -race a data race the
// daemon reports fails the test.
type Daemon struct {
	Client
	Fake  string
	Work  string // the temporary directory: HOME, the sessions, the scripts
	Home  string // RALPH_HOME
	Token string
	// Sessions are the `--session NAME=DIR` of Start; Extra more flags.
	Sessions []string
	Extra    []string
	Log      *syncbuf.Buffer
	proc     *Process
}

// New is a Daemon not yet started: add sessions, then Start.
func New(t testing.TB, o Options) *Daemon {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("process groups and SIGKILL")
	}
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	d := &Daemon{Client: Client{T: t, Ralph: Ralph(t), Addr: addr}, Fake: Fake(t), Work: work, Home: filepath.Join(work, "home"),
		Token: o.Token, Log: &syncbuf.Buffer{}}
	// The token is always set: one in the environment the tests run in
	// would otherwise become the daemon's.
	d.Env = append(Env(work, d.Home), "RALPH_SERVER=http://"+addr, "RALPH_API_TOKEN="+o.Token)
	// Registered before any start, so it runs after the daemon is stopped.
	t.Cleanup(func() {
		if strings.Contains(d.Log.String(), "DATA RACE") {
			t.Error("the daemon has a data race")
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.Log.String())
		}
	})
	return d
}

// Session makes a git repository (AgentRepo) whose agent plays s and
// registers it as session name. It returns the repository and the
// script's path.
func (d *Daemon) Session(name string, s script.Script) (dir, scriptPath string) {
	d.T.Helper()
	dir, scriptPath, err := AgentRepo(d.Ralph, d.Fake, d.Env, d.Work, name, s, nil)
	if err != nil {
		d.T.Fatal(err)
	}
	d.Sessions = append(d.Sessions, name+"="+dir)
	return dir, scriptPath
}

// Start starts the daemon with the sessions, at most maxParallel loops at
// once, and Extra; it is back once the daemon listens.
func (d *Daemon) Start(maxParallel int) {
	d.T.Helper()
	args := []string{"--home", d.Home, "--listen", d.Addr, "--max-parallel", fmt.Sprint(maxParallel)}
	for _, s := range d.Sessions {
		args = append(args, "--session", s)
	}
	// The watchdog reads a private tmux server, never the user's.
	d.Serve(append(append(args, "--tmux-socket", d.TmuxSocket()), d.Extra...)...)
}

// Serve starts `ralph serve ARGS…` as the daemon, whatever its flags.
func (d *Daemon) Serve(args ...string) {
	d.T.Helper()
	d.proc = Serve(d.T, d.Log, d.Ralph, d.Env, args...)
}

// TmuxSocket is the private tmux server the daemon's watchdog reads.
func (d *Daemon) TmuxSocket() string { return filepath.Join(d.Work, "tmux.sock") }

// Pid is the running daemon's process id.
func (d *Daemon) Pid() int { return d.proc.Pid() }

// Kill ends the daemon with SIGKILL, as a crash would.
func (d *Daemon) Kill() {
	if d.proc != nil {
		d.proc.Kill()
		d.proc = nil
	}
}

// Stop ends the daemon with SIGTERM and returns how it exited.
func (d *Daemon) Stop() error {
	p := d.proc
	if p == nil {
		return errors.New("the daemon is not running")
	}
	d.proc = nil
	return p.Stop()
}

// Git runs git in dir with the rig's environment and returns its output.
func (d *Daemon) Git(dir string, args ...string) string {
	d.T.Helper()
	out, err := Git(dir, d.Env, args...)
	if err != nil {
		d.T.Fatal(err)
	}
	return out
}
