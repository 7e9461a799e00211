package cli

import (
	"encoding/json"
	"html"
	"os"
	"os/exec"
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
	r.Session("b", script.Script{RepeatLast: true, Iterations: []script.Iteration{costly("sess-b")}})
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
	// The agent was told what was left of the budget.
	argv, err := os.ReadFile(scriptA + ".argv.jsonl")
	if err != nil || !strings.Contains(string(argv), `"--max-budget-usd","4.00"`) && !strings.Contains(string(argv), `"--max-budget-usd","3.00"`) {
		t.Errorf("no call was capped by the budget left: %v\n%s", err, argv)
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

	// The next day they go on by themselves, and the warning is the new
	// day's to give.
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	r.Env = append(r.Env, "RALPH_TEST_CLOCK_OFFSET=24h")
	r.Start(2)
	for _, s := range []string{"a", "b"} {
		before := r.Status(s).LoopCount
		r.WaitFor(s, "resumed the next day", func(v serve.TaskView) bool { return v.LoopCount > before })
	}
	if next := spend(); next.Fleet.Calls == 0 || next.Day == rep.Day {
		t.Fatalf("the next day: %+v (the day before: %s)", next, rep.Day)
	}
	for _, m := range api.Sent()[sent:] {
		if strings.Contains(m.Text, "waiting for budget") {
			t.Errorf("the chat heard of a wait the next day: %q", m.Text)
		}
	}
}
