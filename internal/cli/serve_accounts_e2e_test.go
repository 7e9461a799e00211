package cli

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// worksUnder is an agent call that works on (a file changes, the plan
// stays open) and writes the account it ran under to account.txt. Its
// agent says a quarter of the weekly window is used.
func worksUnder(session string) script.Iteration {
	return script.Iteration{Append: map[string]string{"work.txt": "call {{call}}\n"}, Files: map[string]string{"account.txt": "{{config_dir}}"},
		Sleep: script.Duration(300 * time.Millisecond),
		StdoutLines: []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","rateLimitType":"seven_day","utilization":0.25,"resetsAt":%d}}`, weekReset.Unix())),
			servetest.Result{Session: session + "-{{call}}", CostUSD: 0.1,
				Text: "Worked." + servetest.RalphStatus("IN_PROGRESS", false, 3)}.Line()}}
}

// Two accounts of Claude Code: one loop exhausts "main" — every loop on
// main waits, shown as waiting for quota on main on the API, in `ralph
// task status`, on the dashboard and in the chat, without calling into
// the limit; loops on "spare" go on, and a loop that may use both goes
// to spare. A restart keeps the window (a new task on main waits at
// once); once the daemon's clock passes the reset the waiting ones
// resume by themselves, with every call made counted once.
// weekReset is when the weekly window worksUnder's agent tells of resets.
var weekReset = time.Now().Add(7 * 24 * time.Hour).Truncate(time.Hour)

func TestAccountsUsageWindows(t *testing.T) {
	home := t.TempDir()
	mainDir, spareDir := filepath.Join(home, "claude-main"), filepath.Join(home, "claude-spare")
	r, api := telegramRig(t, "BUDGET_TIMEZONE=UTC",
		"RALPH_ACCOUNT_MAIN=claude config="+mainDir+" sessions=a,b,d,e",
		"RALPH_ACCOUNT_SPARE=claude config="+spareDir+" sessions=c,e")
	reset := time.Now().Add(10 * time.Minute).Truncate(time.Second)
	limit := script.Iteration{ExitCode: 1, StdoutLines: []json.RawMessage{
		json.RawMessage(fmt.Sprintf(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%d,"rateLimitType":"five_hour"}}`, reset.UnixMilli())),
		json.RawMessage(`{"type":"result","subtype":"success","is_error":true,"session_id":"s","api_error":"usage_limit_reached","result":"You've hit your 5-hour limit"}`)}}
	scripts := map[string]string{}
	dirs := map[string]string{}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		its := []script.Iteration{worksUnder("sess-" + s)}
		if s == "a" {
			its = []script.Iteration{limit, worksUnder("sess-a")}
		}
		dirs[s], scripts[s] = r.Session(s, script.Script{RepeatLast: true, Iterations: its})
	}
	calls := func(s string) int {
		data, err := os.ReadFile(script.ArgvLog(scripts[s]))
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(data), "\n")
	}
	r.Start(5)
	tok, err := serve.Token(serve.Home(r.Home), false)
	if err != nil {
		t.Fatal(err)
	}

	why := "waiting for quota on main until " + reset.Add(time.Minute).UTC().Format("15:04") + " UTC"
	waits := func(v serve.TaskView) bool {
		return string(v.State) == "waiting" && v.Message == why && v.Account == "main"
	}
	r.OK("start", "a", "Exhausts main")
	r.OK("loop", "a", "20")
	va := r.WaitFor("a", "waiting for quota", waits)
	r.OK("start", "b", "Also on main")
	r.OK("loop", "b", "3")
	vb := r.WaitFor("b", "waiting for quota", waits)
	r.OK("start", "c", "On spare")
	r.OK("loop", "c", "3")
	r.OK("start", "e", "On either")
	r.OK("loop", "e", "3")
	for _, s := range []string{"c", "e"} {
		v := r.WaitFor(s, "three calls on spare", func(v serve.TaskView) bool { return v.LoopCount >= 3 })
		if v.Account != "spare" {
			t.Errorf("session %s ran under %q, want spare", s, v.Account)
		}
		if got := readFile(t, filepath.Join(dirs[s], "account.txt")); got != spareDir {
			t.Errorf("session %s's agent had CLAUDE_CONFIG_DIR=%q, want the spare account's", s, got)
		}
	}
	if n := calls("b"); n != 0 {
		t.Errorf("b called its agent %d times into main's known limit", n)
	}
	if n := calls("a"); n != 1 {
		t.Errorf("a called %d times while main was exhausted, want the one that hit the limit", n)
	}
	if out := r.OK("status", "b"); !strings.Contains(out, "now: "+why) {
		t.Errorf("ralph task status b:\n%s", out)
	}
	if code, page := r.API("GET", "/", tok, ""); code != 200 || !strings.Contains(page, html.EscapeString(why)) {
		t.Errorf("dashboard (%d) without the wait:\n%s", code, page)
	}
	windows := func(when string) {
		t.Helper()
		cmd := exec.Command(r.Ralph, "stats", "--fleet", "--json")
		cmd.Env = r.Env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ralph stats --fleet: %v", err)
		}
		var rep serve.BudgetReport
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(rep.Accounts) != 2 || rep.Accounts[0].Name != "main" || rep.Accounts[0].Status != why || !rep.Accounts[0].Until.Equal(reset.Add(time.Minute)) ||
			rep.Accounts[1].Name != "spare" || rep.Accounts[1].Status != "quota left" || rep.Accounts[1].Login != "config "+spareDir {
			t.Errorf("%s, the accounts: %+v", when, rep.Accounts)
		}
		// Every call of the day counts under the account it ran under.
		per := map[string]serve.SpendFigures{}
		sum := 0
		for _, a := range rep.PerAccount {
			per[a.Account] = a
			sum += a.Calls
		}
		if sp := per["spare"]; sp.Calls < 6 || sum != rep.Fleet.Calls || len(per) > 2 {
			t.Errorf("%s, the spend per account: %+v (fleet: %d calls)", when, rep.PerAccount, rep.Fleet.Calls)
		}
		if code, page := r.API("GET", "/", tok, ""); code != 200 || !strings.Contains(page, "Spend today per account: ") || !strings.Contains(page, "spare $") {
			t.Errorf("%s, the dashboard (%d) without the spend per account:\n%s", when, code, page)
		}
		// How much of each window is used, as the agents said: main's
		// five-hour window used up by the call that hit it, spare's weekly
		// one a quarter used.
		var mw, sw []serve.WindowFigures
		if len(rep.Accounts) == 2 {
			mw, sw = rep.Accounts[0].Windows, rep.Accounts[1].Windows
		}
		if len(mw) != 1 || mw[0].Kind != "five_hour" || mw[0].Used == nil || *mw[0].Used != 1 || !mw[0].ResetsAt.Equal(reset) ||
			len(sw) != 1 || sw[0].Kind != "seven_day" || sw[0].Used == nil || *sw[0].Used != 0.25 || !sw[0].ResetsAt.Equal(weekReset) {
			t.Errorf("%s, the windows: main %+v, spare %+v", when, mw, sw)
		}
		if code, page := r.API("GET", "/", tok, ""); code != 200 || !strings.Contains(page, html.EscapeString("Accounts: main (claude): "+why+", five_hour 100% used, resets ")) ||
			!strings.Contains(page, "; spare (claude): quota left, seven_day 25% used, resets ") {
			t.Errorf("%s, the dashboard (%d) without the accounts' windows:\n%s", when, code, page)
		}
	}
	windows("main exhausted")
	said(t, api, 0, why)
	said(t, api, 0, vb.ID)
	_ = va

	// A restart keeps main's window: a new task on main waits at once.
	// (a, whose own state holds the limit it hit, is cancelled first: only
	// the store can tell the next daemon of the window.)
	if v := r.View("cancel", "a"); v.State != "cancelled" {
		t.Fatalf("cancel a: %s", v.State)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	r.Start(5)
	windows("after the restart")
	r.WaitFor("b", "waiting after the restart", waits)
	r.OK("start", "d", "New on main")
	r.OK("loop", "d", "3")
	r.WaitFor("d", "waiting for quota", waits)
	time.Sleep(time.Second) // a call made past the window would show by now
	if n := calls("b") + calls("d"); n != 0 || calls("a") != 1 {
		t.Fatalf("after the restart, calls into main's limit: a %d, b %d, d %d", calls("a"), calls("b"), calls("d"))
	}

	// Past the reset (the daemon's clock moved) they go on by themselves.
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	r.Env = append(r.Env, "RALPH_TEST_CLOCK_OFFSET=15m")
	r.Start(5)
	for _, s := range []string{"b", "d"} {
		v := r.WaitFor(s, "resumed after the reset, to its last loop", func(v serve.TaskView) bool { return v.ExitReason == "max_loops" })
		if v.Account != "main" {
			t.Errorf("session %s resumed under %q", s, v.Account)
		}
	}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		v := r.Status(s)
		if want := map[string]int{"a": 1}[s]; v.LoopCount != max(want, 3*(1-want)) {
			t.Errorf("session %s counted %d iterations, want %d", s, v.LoopCount, max(want, 3*(1-want)))
		}
		if n := calls(s); n != v.LoopCount {
			t.Errorf("session %s: %d calls made, %d iterations counted", s, n, v.LoopCount)
		}
		var hist []int
		for _, h := range v.History {
			hist = append(hist, h.Loop)
		}
		for i := 1; i < len(hist); i++ {
			if hist[i] != hist[i-1]+1 {
				t.Errorf("session %s's iterations %v: one lost or made twice", s, hist)
				break
			}
		}
	}
}

// An account with an API key: its calls get the key in the agent's own
// variable, the variable holding it reaches no agent, and the key shows
// in no log, no view and no report.
func TestAccountKeyReachesOnlyItsCalls(t *testing.T) {
	const secret = "sk-ant-test-0123456789abcdef"
	r := servetest.New(t, servetest.Options{})
	for _, kv := range r.Env {
		if strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			t.Fatalf("the rig sets %s: the test would prove nothing", kv)
		}
	}
	r.Env = append(r.Env, "WORK_CLAUDE_KEY="+secret, "RALPH_ACCOUNT_WORK=claude key=WORK_CLAUDE_KEY sessions=k")
	_, sk := r.Session("k", script.Script{RepeatLast: true, Iterations: []script.Iteration{worksUnder("sess-k")}})
	_, so := r.Session("o", script.Script{RepeatLast: true, Iterations: []script.Iteration{worksUnder("sess-o")}})
	r.Start(2)
	for _, s := range []string{"k", "o"} {
		r.OK("start", s, "Work")
		r.OK("loop", s, "1")
	}
	vk := r.WaitFor("k", "one call", func(v serve.TaskView) bool { return v.ExitReason == "max_loops" })
	vo := r.WaitFor("o", "one call", func(v serve.TaskView) bool { return v.ExitReason == "max_loops" })
	if vk.Account != "work" || vo.Account != "claude" {
		t.Errorf("accounts: k %q, o %q; want work and the agent's own login", vk.Account, vo.Account)
	}
	envOf := func(scriptPath string) []string {
		var c script.Call
		if err := json.Unmarshal([]byte(strings.SplitN(readFile(t, script.ArgvLog(scriptPath)), "\n", 2)[0]), &c); err != nil {
			t.Fatal(err)
		}
		return c.EnvNames
	}
	if names := envOf(sk); !slices.Contains(names, "ANTHROPIC_API_KEY") || slices.Contains(names, "WORK_CLAUDE_KEY") {
		t.Errorf("k's call had %q: want ANTHROPIC_API_KEY and not WORK_CLAUDE_KEY", names)
	}
	if names := envOf(so); slices.Contains(names, "ANTHROPIC_API_KEY") || slices.Contains(names, "WORK_CLAUDE_KEY") {
		t.Errorf("o's call, on no account of it, had the key: %q", names)
	}
	cmd := exec.Command(r.Ralph, "stats", "--fleet", "--json")
	cmd.Env = r.Env
	stats, err := cmd.Output()
	if err != nil || !strings.Contains(string(stats), `"login": "key in $WORK_CLAUDE_KEY"`) {
		t.Errorf("ralph stats --fleet: %v\n%s", err, stats)
	}
	tok, err := serve.Token(serve.Home(r.Home), false)
	if err != nil {
		t.Fatal(err)
	}
	_, page := r.API("GET", "/", tok, "")
	if !strings.Contains(page, "work (claude): quota left") {
		t.Errorf("the dashboard without the account:\n%s", page)
	}
	for where, text := range map[string]string{"the daemon's log": r.Log.String(), "the stats": string(stats), "k's status": r.OK("status", "k"), "the dashboard": page} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the key", where)
		}
	}
}

// Session priorities: with one slot, a queued task of a session of a
// higher priority starts before one queued earlier.
func TestSessionPriorities(t *testing.T) {
	r := servetest.New(t, servetest.Options{})
	r.Env = append(r.Env, "RALPH_SESSION_PRIORITIES=hi:5")
	// x's and hi's calls run until the test lets them end, however slow
	// the machine: the order the queued ones start in is the point.
	held := func(s string) script.Script {
		it := worksUnder(s)
		it.WaitFile = "release"
		return script.Script{RepeatLast: true, Iterations: []script.Iteration{it}}
	}
	xdir, _ := r.Session("x", held("x"))
	hidir, _ := r.Session("hi", held("hi"))
	r.Session("lo", script.Script{RepeatLast: true, Iterations: []script.Iteration{worksUnder("lo")}})
	r.Start(1)
	r.OK("start", "x", "First")
	r.OK("loop", "x", "1")
	r.WaitFor("x", "running", servetest.StateIs("running"))
	r.OK("start", "lo", "Queued first")
	r.OK("loop", "lo", "1")
	r.OK("start", "hi", "Queued second, of a higher priority")
	r.OK("loop", "hi", "1")
	if v := r.Status("lo"); v.State != "queued" {
		t.Fatalf("lo is %s while x runs", v.State)
	}
	release := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	release(xdir)
	r.WaitFor("hi", "running", servetest.StateIs("running"))
	if v := r.Status("lo"); v.State != "queued" {
		t.Errorf("lo is %s while hi runs: hi's priority did not put it first", v.State)
	}
	release(hidir)
	r.WaitFor("lo", "its turn", func(v serve.TaskView) bool { return v.ExitReason == "max_loops" })
}
