package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
)

// underAccount is twoSteps with the account each call ran under written
// to account.txt (the agent's CLAUDE_CONFIG_DIR).
func underAccount(taskFile, session string) script.Script {
	s := twoSteps(taskFile, session)
	for i := range s.Iterations {
		s.Iterations[i].Files["account.txt"] = "{{config_dir}}"
	}
	return s
}

// On Temporal each worker holds accounts of its own: a session allowed
// only account spare waits, shown as waiting for a worker with spare,
// while no worker holds it, then runs on the one worker that does, under
// that worker's own setting of spare; a session on main runs on the
// worker holding main; neither worker ever gets the other's calls.
func TestTemporalWorkersHoldAccounts(t *testing.T) {
	r := newTemporalRig(t)
	home := t.TempDir()
	r.Env = append(r.Env,
		"RALPH_ACCOUNT_MAIN=claude config="+filepath.Join(home, "daemon-main")+" sessions=m",
		"RALPH_ACCOUNT_SPARE=claude config="+filepath.Join(home, "daemon-spare")+" sessions=x")
	dirs := map[string]string{}
	scripts := map[string]string{}
	for _, s := range []string{"m", "x"} {
		dirs[s], scripts[s] = r.Session(s, underAccount(filepath.Join(r.Home, "handoffs", s+"-task.md"), s))
	}
	mainDir, spareDir := filepath.Join(home, "w1-main"), filepath.Join(home, "w2-spare")
	worker := func(name string, env []string, extra ...string) {
		l := &syncbuf.Buffer{}
		r.workers[name] = servetest.Start(t, l, r.Ralph, append(slices.Clone(r.Env), env...),
			append([]string{"worker", "--temporal-address", r.srv.Addr, "--home", filepath.Join(r.Work, "worker-"+name)}, extra...)...)
		r.wlogs[name] = l
	}
	worker("w1", []string{"RALPH_ACCOUNT_MAIN=claude config=" + mainDir}, "--accounts", "main")
	r.Start(2)
	for _, s := range []string{"m", "x"} {
		r.OK("start", s, "Build", "it")
		r.OK("loop", s, "10")
	}
	why := "waiting for a worker with account spare"
	r.WaitFor("x", why, func(v serve.TaskView) bool {
		return string(v.State) == "waiting" && v.Message == why && v.Account == "spare"
	})
	if out := r.OK("status", "x"); !strings.Contains(out, why) {
		t.Errorf("ralph task status x:\n%s", out)
	}
	if _, err := os.Stat(script.ArgvLog(scripts["x"])); !os.IsNotExist(err) {
		t.Errorf("x's agent was called with no worker holding spare: %v", err)
	}
	// The environment's setting, as --accounts' default.
	worker("w2", []string{"RALPH_ACCOUNT_SPARE=claude config=" + spareDir, "RALPH_WORKER_ACCOUNTS=spare"})
	for s, want := range map[string]string{"m": mainDir, "x": spareDir} {
		if v := r.WaitFor(s, "done", servetest.StateIs("done")); v.LoopCount != 2 {
			t.Errorf("%s: %d loops, want 2", s, v.LoopCount)
		}
		if got := readFile(t, filepath.Join(dirs[s], "account.txt")); got != want {
			t.Errorf("session %s's agent had CLAUDE_CONFIG_DIR=%q, want %q (its worker's own setting)", s, got, want)
		}
	}
	w1, w2 := r.wlogs["w1"].String(), r.wlogs["w2"].String()
	if strings.Contains(w1, "[x] task") || strings.Count(w2, "[x] task t2: loop") != 4 ||
		strings.Contains(w2, "[m] task") || strings.Count(w1, "[m] task t1: loop") != 4 {
		t.Errorf("calls ran off their account's worker:\nworker w1:\n%s\nworker w2:\n%s", w1, w2)
	}
}

// A worker holds only accounts set on its machine; --accounts wins over
// the environment's list.
func TestHeldAccounts(t *testing.T) {
	env := []string{"RALPH_ACCOUNT_SPARE=claude config=/srv/spare", "RALPH_WORKER_ACCOUNTS=spare"}
	getenv := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	for _, c := range []struct {
		flag, want, err string
	}{
		{"", "spare", ""},
		{"Spare", "spare", ""},
		{"main", "", `--accounts: account "main": this machine has no RALPH_ACCOUNT_MAIN setting`},
	} {
		got, err := heldAccounts(c.flag, env, getenv)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: %v, want %s", c.flag, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != 1 || got[c.want].ConfigDir != "/srv/spare" {
			t.Errorf("%q: %v %v", c.flag, got, err)
		}
	}
}
