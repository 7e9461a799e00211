package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

func TestSessionsConf(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.conf")
	if s, err := sessionsConf(path); err != nil || s != nil {
		t.Fatalf("missing file: %v %v", s, err)
	}
	os.WriteFile(path, []byte("# the fleet\n\napi=/src/api\n  web = /src/web\n"), 0o644)
	if _, err := sessionsConf(path); err == nil || !strings.Contains(err.Error(), "sessions.conf:4:") {
		t.Fatalf("a name with spaces: %v", err)
	}
	os.WriteFile(path, []byte("# the fleet\n\napi=/src/api\nweb=/src/web\n"), 0o644)
	s, err := sessionsConf(path)
	if err != nil || len(s) != 2 || s[0].Name != "api" || s[1].Dir != "/src/web" {
		t.Fatalf("%v %+v", err, s)
	}
}

// The config file registers sessions and sets the listen address and the
// number of loops; flags win over it, and it sets environment defaults
// without overriding the environment.
func TestApplyServeConf(t *testing.T) {
	home := t.TempDir()
	conf := "LISTEN=127.0.0.1:7788\nMAX_PARALLEL=3\nMAX_CONNECTIONS=99\nMETRICS_LISTEN=127.0.0.1:7789\nHISTORY_DAYS=9\nSESSION=api=/src/api\nRALPH_TEST_CONF_A=from-file\nRALPH_TEST_CONF_B=from-file\n"
	os.WriteFile(filepath.Join(home, "serve.conf"), []byte(conf), 0o600)
	t.Setenv("RALPH_TEST_CONF_B", "from-env")
	os.Unsetenv("RALPH_TEST_CONF_A")
	t.Cleanup(func() { os.Unsetenv("RALPH_TEST_CONF_A") })

	o := &serveOptions{Listen: "127.0.0.1:7777", MaxParallel: 7, HistoryDays: 30, Given: []string{"max-parallel"}}
	if err := applyServeConf(o, serve.Home(home)); err != nil {
		t.Fatal(err)
	}
	if o.Listen != "127.0.0.1:7788" || o.MaxParallel != 7 || o.MaxConns != 99 || o.MetricsListen != "127.0.0.1:7789" || o.HistoryDays != 9 || len(o.confSessions) != 1 || o.confSessions[0].Name != "api" {
		t.Errorf("options %+v", o)
	}
	if a, b := os.Getenv("RALPH_TEST_CONF_A"), os.Getenv("RALPH_TEST_CONF_B"); a != "from-file" || b != "from-env" {
		t.Errorf("environment A=%q B=%q", a, b)
	}

	// A named file must exist; the default one may not.
	o = &serveOptions{Config: filepath.Join(home, "missing.conf")}
	if err := applyServeConf(o, serve.Home(home)); err == nil || !strings.Contains(err.Error(), "missing.conf") {
		t.Errorf("missing --config: %v", err)
	}
	if err := applyServeConf(&serveOptions{}, serve.Home(t.TempDir())); err != nil {
		t.Errorf("no default file: %v", err)
	}

	// A credential in a file others may read: refused, the value unshown.
	os.WriteFile(filepath.Join(home, "serve.conf"), []byte("SLACK_BOT_TOKEN=xoxb-123-very-secret\n"), 0o644)
	os.Chmod(filepath.Join(home, "serve.conf"), 0o644)
	err := applyServeConf(&serveOptions{}, serve.Home(home))
	if err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "very-secret") {
		t.Errorf("readable credential: %v", err)
	}
	// A bad line names the file and line.
	os.WriteFile(filepath.Join(home, "serve.conf"), []byte("LISTEN=a:1\nMAX_PARALLEL=many\n"), 0o600)
	if err := applyServeConf(&serveOptions{}, serve.Home(home)); err == nil || !strings.Contains(err.Error(), "serve.conf:2: MAX_PARALLEL") {
		t.Errorf("bad line: %v", err)
	}
}

// The daemon runs from its config file alone.
func TestServeFromConfigFile(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	dir, scriptC := r.Session("c", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-c", "Worked."+servetest.RalphStatus("IN_PROGRESS", false, 1))}},
	}})
	os.MkdirAll(r.Home, 0o700)
	conf := fmt.Sprintf("# the fleet\nLISTEN=%s\nMAX_PARALLEL=1\nSESSION=c=%s\n", r.Addr, dir)
	os.WriteFile(filepath.Join(r.Home, "serve.conf"), []byte(conf), 0o600)
	r.Serve("--home", r.Home, "--tmux-socket", r.TmuxSocket())
	if log := r.Log.String(); !strings.Contains(log, "listening on http://"+r.Addr) || !strings.Contains(log, "sessions: c, max 1 loops at once") {
		t.Errorf("start line:\n%s", log)
	}
	if out := r.OK("start", "c", "From the file"); !strings.Contains(out, "From the file") {
		t.Errorf("start: %s", out)
	}
	// The daemon's credentials stay out of its agents' environment.
	r.OK("loop", "c", "1")
	r.WaitFor("c", "its one loop", servetest.StateIs("waiting"))
	var call script.Call
	if err := json.Unmarshal([]byte(strings.SplitN(readFile(t, script.ArgvLog(scriptC)), "\n", 2)[0]), &call); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(call.EnvNames, "RALPH_API_TOKEN") || !slices.Contains(call.EnvNames, "RALPH_DELAY") {
		t.Errorf("the agent's environment: %v", call.EnvNames)
	}
}

// The watchdog's flags are checked before anything starts.
func TestServeWatchFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tmux-target", "claude"}, "want {session} in it"},
		{[]string{"--watch-interval", "-1s"}, "--watch-interval -1s"},
	} {
		var out strings.Builder
		root := NewRoot(IO{Out: &out, Err: &out})
		root.SetArgs(append([]string{"serve", "--home", t.TempDir()}, tc.args...))
		root.SetOut(&out)
		root.SetErr(&out)
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}
