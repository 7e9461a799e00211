package cli

import (
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// costly is an agent call that works on (a file changes, the plan stays
// open) and costs a dollar, in an agent session of its own so that each
// call's report is its own cost.
func costly(session string) script.Iteration {
	return script.Iteration{Append: map[string]string{"work.txt": "call {{call}}\n"}, Sleep: script.Duration(400 * time.Millisecond),
		StdoutLines: []json.RawMessage{servetest.Result{Session: session + "-{{call}}", CostUSD: 1, InputTokens: 1000, OutputTokens: 100,
			Text: "Worked." + servetest.RalphStatus("IN_PROGRESS", false, 3)}.Line()}}
}

// A fleet's daily cost budget reached across three tasks on two sessions:
// no call starts once it is spent (the spend stops at the budget, within
// one call's cost), every task left waits with the reason on the API and
// in the chat, the 80% warning is said once to each chat, a restart keeps
// the day's spend and the waits, and the next day (the daemon's clock
// moved) they go on by themselves.
func TestFleetDailyBudget(t *testing.T) {
	r, api := telegramRig(t, "RALPH_FLEET_MAX_COST_PER_DAY=5", "BUDGET_TIMEZONE=Europe/Berlin")
	_, scriptA := r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{
		{Files: map[string]string{"done.txt": "done\n"}, StdoutLines: []json.RawMessage{servetest.Result{Session: "sess-a-1", CostUSD: 1,
			Text: "All done." + servetest.CompleteStatus}.Line()}},
		costly("sess-a"),
	}})
	_, scriptB := r.Session("b", script.Script{RepeatLast: true, Iterations: []script.Iteration{costly("sess-b")}})
	r.Start(2)
	tok0, err := serve.Token(serve.Home(r.Home), false)
	if err != nil {
		t.Fatal(err)
	}
	events := r.Events(tok0)
	r.OK("start", "a", "One")
	r.OK("loop", "a", "5")
	r.OK("start", "b", "Two")
	r.OK("loop", "b", "20")
	r.WaitFor("a", "done", servetest.StateIs("done"))
	r.OK("start", "a", "Three")
	r.OK("loop", "a", "20")

	const why = "waiting for budget: fleet cost 5.00/5.00 USD today, until 00:00 Europe/Berlin"
	waits := func(v serve.TaskView) bool { return string(v.State) == "waiting" && v.Message == why }
	va := r.WaitFor("a", "waiting for the budget", waits)
	vb := r.WaitFor("b", "waiting for the budget", waits)
	if va.Title != "Three" {
		t.Fatalf("session a shows %q", va.Title)
	}
	if out := r.OK("status", "b"); !strings.Contains(out, "now: "+why) {
		t.Errorf("ralph task status b:\n%s", out)
	}
	spend := func() serve.BudgetReport {
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
		return rep
	}
	time.Sleep(time.Second) // a call started after the wait would show by now
	rep := spend()
	if rep.Fleet.CostUSD > 5+1 || rep.Fleet.CostUSD < 5 || rep.Fleet.Running != 0 || rep.Zone != "Europe/Berlin" {
		t.Fatalf("spend after the budget: %+v", rep)
	}
	if rep.Fleet.CostUSD != 5 {
		t.Errorf("the fleet spent $%.2f: more than the calls in flight would explain", rep.Fleet.CostUSD)
	}
	// The dashboard shows the day's spend and the waits; its event stream
	// had the warning.
	if code, page := r.API("GET", "/", tok0, ""); code != 200 || !strings.Contains(page, "fleet $5.00 of $5.00") ||
		!strings.Contains(page, html.EscapeString(why)) {
		t.Errorf("dashboard overview (%d) without the spend or the wait:\n%s", code, page)
	}
	if !events.WaitFor(`"type":"budget_warning"`, 5*time.Second) {
		t.Errorf("no budget warning on the event stream")
	}
	said(t, api, 0, "a · "+va.ID+" "+why)
	said(t, api, 0, "b · "+vb.ID+" "+why)
	for _, chat := range []int64{42, -100} {
		n := 0
		for _, m := range api.Sent() {
			if m.ChatID == chat && strings.HasPrefix(m.Text, "💰 budget: fleet cost") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("chat %d heard the budget's warning %d times, want once", chat, n)
		}
	}
	// The agent was told what was left of the budget at each call.
	var caps []string
	for _, sp := range []string{scriptA, scriptB} {
		data, err := os.ReadFile(sp + ".argv.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var c struct{ Args []string }
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				t.Fatal(err)
			}
			i := slices.Index(c.Args, "--max-budget-usd")
			if i < 0 || i+1 >= len(c.Args) {
				t.Fatalf("a call without the budget's cap: %q", c.Args)
			}
			caps = append(caps, c.Args[i+1])
		}
	}
	if !slices.Contains(caps, "5.00") || !slices.ContainsFunc(caps, func(c string) bool { return c < "5.00" }) {
		t.Errorf("caps passed down %q: want the whole budget first, then what was left", caps)
	}

	// A restart keeps the day's spend: nothing starts.
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	r.Start(2)
	r.WaitFor("a", "waiting after the restart", waits)
	r.WaitFor("b", "waiting after the restart", waits)
	time.Sleep(time.Second)
	if rep := spend(); rep.Fleet.CostUSD != 5 || rep.Fleet.Calls != 5 {
		t.Fatalf("after the restart: %+v", rep)
	}
	sent := len(api.Sent())
	before := map[string]int{"a": r.Status("a").LoopCount, "b": r.Status("b").LoopCount}

	// The next day they go on by themselves.
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	r.Env = append(r.Env, "RALPH_TEST_CLOCK_OFFSET=24h")
	r.Start(2)
	for _, s := range []string{"a", "b"} {
		r.WaitFor(s, "resumed the next day", func(v serve.TaskView) bool { return v.LoopCount > before[s] })
	}
	if next := spend(); next.Fleet.Calls == 0 || next.Day == rep.Day {
		t.Fatalf("the next day: %+v (the day before: %s)", next, rep.Day)
	}
	for _, m := range api.Sent()[:sent] {
		if strings.Contains(m.Text, "waiting for budget") && !strings.Contains(m.Text, "·") {
			t.Errorf("a wait's notice names no task: %q", m.Text)
		}
	}
	// Up to the next day: a restart said nothing it had said.
	day1 := api.Sent()[:sent]
	count := func(sub string) int {
		n := 0
		for _, m := range day1 {
			if strings.Contains(m.Text, sub) {
				n++
			}
		}
		return n
	}
	if n := count("💰 budget: fleet cost"); n != 2 {
		t.Errorf("the chats heard the day's warning %d times, want once each (2)", n)
	}
	if n := count("t3 waiting for budget"); n != 1 {
		t.Errorf("the chat heard %d times that t3 waits, want once (a restart says nothing new)", n)
	}
}

// On Temporal a workflow decides its own calls: the daemon's hold reaches
// it as a signal, and it waits with the daemon's reason, having spent at
// most one call past the budget.
func TestTemporalDailyBudget(t *testing.T) {
	r := newTemporalRig(t)
	r.Env = append(r.Env, "RALPH_FLEET_MAX_COST_PER_DAY=3", "BUDGET_TIMEZONE=UTC")
	_, scriptA := r.Session("a", script.Script{RepeatLast: true, Iterations: []script.Iteration{costly("sess-a")}})
	r.worker("w")
	r.Start(1)
	r.OK("start", "a", "Spend")
	r.OK("loop", "a", "20")
	v := r.WaitFor("a", "waiting for the budget", func(v serve.TaskView) bool {
		return string(v.State) == "waiting" && strings.HasPrefix(v.Message, "waiting for budget: fleet cost ") &&
			strings.HasSuffix(v.Message, "/3.00 USD today, until 00:00 UTC")
	})
	time.Sleep(2 * time.Second) // a call made past the hold would be recorded by now
	cmd := exec.Command(r.Ralph, "stats", "--fleet", "--json")
	cmd.Env = r.Env
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var rep serve.BudgetReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Fleet.CostUSD < 3 || rep.Fleet.CostUSD > 4 || r.Status("a").LoopCount != v.LoopCount {
		t.Fatalf("spent $%.2f in %d calls (the task at %d, then %d): want $3–4 and no call after the hold",
			rep.Fleet.CostUSD, rep.Fleet.Calls, v.LoopCount, r.Status("a").LoopCount)
	}
	// The worker told each call what was left.
	argv, err := os.ReadFile(scriptA + ".argv.jsonl")
	if err != nil || !strings.Contains(string(argv), `"--max-budget-usd","3.00"`) || !strings.Contains(string(argv), `"--max-budget-usd","1.00"`) {
		t.Errorf("the calls' caps: %v\n%s", err, argv)
	}
}
