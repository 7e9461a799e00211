package dashboard

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

// The history in a real browser against a real daemon: after four tasks
// finished on a session (and a fifth waits), the done counter says 4 and
// lists them; the session page lists all five; a finished task's page
// shows its iteration and links to the iteration's rendered log; the new
// task form of a free session's page starts a task; Reset breaker is not
// offered on a closed breaker, and Cancel asks before it cancels.
func TestBrowserHistory(t *testing.T) {
	ctx := browser(t)
	r := newDaemonRig(t)
	fileA := filepath.Join(r.Home, "handoffs", "alpha-task.md")
	var steps []script.Iteration
	for i := 1; i <= 4; i++ {
		steps = append(steps, script.Iteration{
			Files: map[string]string{fileA: servetest.TaskFile(fmt.Sprintf("Step %d", i), "alpha", true), fmt.Sprintf("step%d.txt", i): "a\nb\n"},
			StdoutLines: []json.RawMessage{
				servetest.AssistantText(fmt.Sprintf("Working on step %d.", i)),
				servetest.AssistantTool("Bash", map[string]any{"command": "go test ./..."}),
				resultLine("sess-a", fmt.Sprintf("Finished step %d.", i)+servetest.RalphStatus("IN_PROGRESS", false, 0)),
			}})
	}
	r.Session("alpha", script.Script{Iterations: steps})
	r.Session("beta", script.Script{RepeatLast: true, Iterations: []script.Iteration{{
		Files: map[string]string{"n.txt": "{{call}}\n"}, Sleep: script.Duration(300 * time.Millisecond),
		StdoutLines: []json.RawMessage{resultLine("sess-b", "Slowly."+servetest.RalphStatus("IN_PROGRESS", false, 3))}}}})
	r.Session("gamma", script.Script{})
	r.Start(4)
	base := "http://" + r.Addr

	for i := 1; i <= 4; i++ {
		r.ok("POST", "/api/tasks", fmt.Sprintf(`{"session":"alpha","title":"Step %d","max_loops":5}`, i))
		for deadline := time.Now().Add(30 * time.Second); r.state("alpha") != "done"; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("step %d never done: %s", i, r.state("alpha"))
			}
		}
	}
	r.ok("POST", "/api/tasks", `{"session":"alpha","title":"Step 5"}`) // waits: alpha's current task is not done
	r.ok("POST", "/api/tasks", `{"session":"beta","title":"Work slowly","max_loops":500}`)

	b := tab{t: t, ctx: ctx}
	b.run(chromedp.Navigate(base + "/?token=" + r.Token))
	b.waitJS("the overview", `!!document.querySelector("#task-alpha")`, 10*time.Second)
	if got := b.text("#count-done"); got != "4" {
		t.Errorf("the done counter says %q after four finished tasks", got)
	}
	b.click(`a[href="/?state=done"]`, "")
	b.waitJS("the done tasks", `document.querySelectorAll("table.tasks tbody tr").length === 4`, 10*time.Second)
	for i := 1; i <= 4; i++ {
		if !strings.Contains(b.text("table.tasks"), fmt.Sprintf("Step %d", i)) {
			t.Errorf("the done tasks lack step %d", i)
		}
	}

	// The session page: every task alpha kept, newest first.
	b.run(chromedp.Navigate(base + "/session/alpha"))
	b.waitJS("alpha's tasks", `document.querySelectorAll("#session-tasks tbody tr").length === 5`, 10*time.Second)
	if first := b.text("#session-tasks tbody tr"); !strings.Contains(first, "Step 5") || !strings.Contains(first, "waiting") {
		t.Errorf("the newest task first: %q", first)
	}
	b.shot("dashboard-session.png")

	// A finished task's page, and its iteration's log.
	b.click(`#session-tasks a[href="/tasks/t4"]`, "")
	b.waitJS("t4's page", `!!document.querySelector("#iterations") && document.querySelector("h1").innerText === "Step 4"`, 10*time.Second)
	if facts := b.text("#facts"); !strings.Contains(facts, "done") || !strings.Contains(facts, "plan_complete") {
		t.Errorf("t4's facts: %q", facts)
	}
	if row := b.text("#iterations tbody tr"); !strings.Contains(row, "+2 −0") || !strings.Contains(row, "Finished step 4.") {
		t.Errorf("t4's iteration: %q", row)
	}
	if who := b.text("#commands"); !strings.Contains(who, "start_loop") || !strings.Contains(who, "api") {
		t.Errorf("who did what: %q", who)
	}
	b.shot("dashboard-history-task.png")
	b.click(`#iterations a[href="/tasks/t4/iterations/1"]`, "")
	b.waitJS("the iteration's log", `!!document.querySelector("#log") && document.querySelector("#log").innerText.includes("Finished step 4.")`, 10*time.Second)
	if log := b.text("#log"); !strings.Contains(log, "Working on step 4.") || !strings.Contains(log, "⚡ Bash") {
		t.Errorf("the rendered log:\n%s", log)
	}
	if receipt := b.text("#receipt"); !strings.Contains(receipt, "+2 −0") || !strings.Contains(receipt, "claude") {
		t.Errorf("the receipt: %q", receipt)
	}
	b.shot("dashboard-iteration.png")

	// A free session's page offers a new task; the form goes through the
	// one command path and lands on the new task's page.
	b.run(chromedp.Navigate(base + "/session/gamma"))
	b.waitJS("the new task form", `!!document.querySelector("#new-title")`, 10*time.Second)
	b.click(`section.newtask button[type="submit"]`, `document.querySelector("#new-title").value = "Plan the release"; document.querySelector("#new-max").value = "0"`)
	b.waitJS("the new task's page", `location.pathname === "/task/gamma" && document.querySelector("h1").innerText === "Plan the release"`, 10*time.Second)
	if s := r.state("gamma"); s != "waiting" {
		t.Errorf("gamma's new task: %s", s)
	}
	var v struct {
		Origin string `json:"origin"`
	}
	if err := json.Unmarshal([]byte(r.ok("GET", "/api/tasks/gamma", "")), &v); err != nil || v.Origin != "dashboard" {
		t.Errorf("the new task's origin: %q %v", v.Origin, err)
	}

	// A running task with a closed breaker: no Reset; Cancel asks first.
	b.run(chromedp.Navigate(base + "/task/beta"))
	b.waitJS("beta running", `document.querySelector("#state").innerText.includes("running")`, 30*time.Second)
	if eval[bool](b, `!!document.querySelector('form[action="/task/beta/reset"]')`) {
		t.Error("Reset breaker offered on a CLOSED breaker")
	}
	b.click(`form[action="/task/beta/cancel"] button`, "")
	b.waitJS("the confirmation", `!!document.querySelector("#confirm-what")`, 10*time.Second)
	if s := r.state("beta"); s != "running" {
		t.Errorf("beta before the confirmation: %s", s)
	}
	b.click(`#confirm-cancel button`, "")
	b.waitJS("beta cancelled", `location.pathname === "/task/beta" && document.querySelector("#state").innerText.includes("cancelled")`, 30*time.Second)

	// The charts by day: one bar per day, a week at least.
	b.run(chromedp.Navigate(base + "/stats"))
	b.waitJS("the chart by day", `document.querySelectorAll("#iterations-by-day rect.bar.ok").length >= 7`, 10*time.Second)
}

// click presses an element of the page (a link, a form's button) as a
// person would, in one step of the page's own (see submit); set runs first.
func (b tab) click(sel, set string) {
	b.t.Helper()
	b.waitJS("a "+sel+" to press", `(() => { const e = document.querySelector(`+jsString(sel)+`); if (!e) return false; `+set+`; e.click(); return true })()`, 10*time.Second)
}
