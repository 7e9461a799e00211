package dashboard

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/servetest"
)

var shots = flag.String("screenshots", "", "write the browser test's screenshots (PNG) into this directory (docs/img)")

// chromium finds the browser: Debian's package, never a download. Without
// it the test is skipped, except under CI, where it must run.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is missing (scripts/install-test-deps.sh installs it)")
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// browser starts a headless Chromium with a fresh profile and no network
// of its own (no updates, no sync, no QUIC).
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first call starts the browser; it must not have a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// page is the browser tab of a test, with helpers that fail the test.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func (b tab) run(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// value runs an action that returns a value.
func value[T any](b tab, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	return v
}

// eval evaluates a JavaScript expression.
func eval[T any](b tab, js string) T {
	b.t.Helper()
	return value(b, chromedp.Evaluate[T](js))
}

// waitJS waits until a JavaScript expression is true.
func (b tab) waitJS(what, js string, d time.Duration) {
	b.t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
	}
	html, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("main") ? document.querySelector("main").innerText : ""`))
	b.t.Fatalf("never %s (%s); the page shows:\n%s", what, js, html)
}

// submit sends a form of the page as pressing its button would — its
// action, its fields (the CSRF token among them), the page's cookie and
// origin — in one step of the page's own: a live page may swap the form for
// a fresh copy between any two steps, so a lookup and a later click could
// press a node that is gone. set runs first, in the same step (to type a
// value into the form).
func (b tab) submit(formSel, set string) {
	b.t.Helper()
	b.waitJS("a "+formSel+" to send", `(() => { const f = document.querySelector(`+jsString(formSel)+`); if (!f) return false; `+set+
		`; fetch(f.action, {method: "POST", body: new URLSearchParams(new FormData(f)), credentials: "same-origin", redirect: "manual"}); return true })()`, 10*time.Second)
}

func (b tab) text(sel string) string {
	b.t.Helper()
	return eval[string](b, `(document.querySelector(`+jsString(sel)+`) || {innerText: ""}).innerText`)
}

func (b tab) shot(name string) {
	b.t.Helper()
	if *shots == "" {
		return
	}
	png := value(b, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(*shots, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A real daemon with the scripted agent, driven in a real browser: the
// token logs in and leaves the address; the overview lists the tasks and
// follows a loop without a reload; a task page shows the agent's live
// activity; a question is answered and the task resumes; stop stops.
// Without the token nothing is served. The figures it logs (event to
// page, the daemon's CPU with an idle page open) are docs/dashboard.md's.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	r := newDaemonRig(t)
	fileA := filepath.Join(r.Home, "handoffs", "alpha-task.md")
	r.Session("alpha", script.Script{RepeatLast: true, Iterations: []script.Iteration{{
		Files:     map[string]string{fileA: servetest.TaskFile("Build the parser", "alpha", true, false, false), "n.txt": "{{call}}\n"},
		LineDelay: script.Duration(250 * time.Millisecond),
		StdoutLines: []json.RawMessage{
			servetest.Line(map[string]any{"type": "system", "subtype": "init", "session_id": "sess-a"}),
			servetest.AssistantText("Reading the parser and its tests."),
			servetest.AssistantTool("Read", map[string]any{"file_path": "parser.go"}),
			servetest.AssistantTool("Bash", map[string]any{"command": "go test ./..."}),
			servetest.AssistantText("Tests pass; on to the next step."),
			resultLine("sess-a", "Parsed the header."+servetest.RalphStatus("IN_PROGRESS", false, 2)),
		}}}})
	r.Session("beta", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{resultLine("sess-b", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{resultLine("sess-b", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}})
	r.Start(4)
	base := "http://" + r.Addr

	// Without the token: refused, whatever the path.
	for _, p := range []string{"/", "/task/alpha", "/stats", "/events?view=overview", "/?token=wrong", "/api/tasks"} {
		if code, body := r.API("GET", p, "", ""); code != 401 || strings.Contains(body, r.Token) {
			t.Errorf("GET %s without the token: %d", p, code)
		}
	}
	r.ok("POST", "/api/tasks", `{"session":"alpha","title":"Build the parser"}`)
	r.ok("POST", "/api/tasks", `{"session":"beta","title":"Pick a database"}`)
	r.ok("POST", "/api/tasks/alpha/loop", `{"max_loops":200}`)
	r.ok("POST", "/api/tasks/beta/loop", `{"max_loops":5}`)

	b := tab{t: t, ctx: ctx}
	b.run(chromedp.Navigate(base + "/"))
	if h := b.text("h1"); h != "Log in" {
		t.Errorf("a browser without the cookie sees %q", h)
	}
	b.run(chromedp.Navigate(base + "/?token=" + r.Token))
	loc := value(b, chromedp.Location())
	if loc != base+"/" {
		t.Errorf("after the login the address is %q", loc)
	}
	b.waitJS("both tasks listed", `!!document.querySelector("#task-alpha") && !!document.querySelector("#task-beta")`, 10*time.Second)
	b.waitJS("beta asking", `document.querySelector("#task-beta").innerText.includes("asks")`, 30*time.Second)

	// The loop number moves without a reload: a mark set on the page
	// stays while the number grows.
	eval[int](b, `window.__mark = "same page"; 1`)
	first := b.text("#task-alpha .loop")
	b.waitJS("alpha's loop advancing", `Number(document.querySelector("#task-alpha .loop").innerText) > `+orZero(first), 30*time.Second)
	if eval[string](b, `window.__mark || ""`) != "same page" {
		t.Error("the page reloaded")
	}
	b.shot("dashboard-overview.png")

	// From an event to the open page: a pause asked over the API shows as
	// "pausing" (or "paused") in the overview, and resume takes it away.
	eval[int](b, `window.__seen = []; new MutationObserver(() => { const e = document.querySelector("#task-alpha"); window.__seen.push([Date.now(), e ? e.innerText : ""]) }).observe(document.querySelector("#overview"), {childList: true, subtree: true, characterData: true}); 1`)
	var lat []time.Duration
	for range 3 {
		for _, step := range []struct{ verb, want string }{{"pause", "true"}, {"resume", "false"}} {
			since := time.Now().UnixMilli()
			r.ok("POST", "/api/tasks/alpha/"+step.verb, "")
			cond := `window.__seen.some(s => s[0] >= ` + jsInt(since) + ` && /paus/.test(s[1]) === ` + step.want + `)`
			b.waitJS("alpha "+step.verb+"d on the page", cond, 10*time.Second)
			at := eval[int64](b, `window.__seen.find(s => s[0] >= `+jsInt(since)+` && /paus/.test(s[1]) === `+step.want+`)[0]`)
			lat = append(lat, time.Duration(at-since)*time.Millisecond)
		}
	}
	t.Logf("event to open page (API request to DOM change), %d samples: %v", len(lat), lat)

	// A task page: the agent's live activity, the checklist, iterations.
	b.run(chromedp.Navigate(base + "/task/alpha"))
	b.waitJS("live tool calls", `document.querySelector("#live").innerText.includes("⚡")`, 30*time.Second)
	b.waitJS("the checklist", `document.querySelectorAll(".checklist li").length === 3`, 10*time.Second)
	b.waitJS("an iteration row", `document.querySelectorAll("#iterations tbody tr").length > 0`, 10*time.Second)
	b.shot("dashboard-task.png")

	// The question, answered in the page; the task resumes and finishes.
	b.run(chromedp.Navigate(base + "/task/beta"))
	b.waitJS("the question", `document.querySelector("#question").innerText.includes("PostgreSQL or SQLite?")`, 10*time.Second)
	b.shot("dashboard-question.png")
	// Typed and sent in one step (see submit).
	b.submit(`form[action="/task/beta/answer"]`, `f.querySelector("#answer").value = "SQLite, please"`)
	b.waitJS("beta done", `document.querySelector("#state").innerText.includes("done")`, 30*time.Second)
	if s := r.state("beta"); s != "done" {
		t.Errorf("beta after the answer: %s", s)
	}

	// Stop, pressed in the page: the loop ends after its iteration.
	b.run(chromedp.Navigate(base + "/task/alpha"))
	b.submit(`form[action="/task/alpha/stop"]`, "")
	b.waitJS("alpha stopped", `document.querySelector("#state").innerText.includes("waiting")`, 30*time.Second)
	if s := r.state("alpha"); s != "waiting" {
		t.Errorf("alpha after stop: %s", s)
	}

	// An open, idle page costs the daemon nothing measurable: no polling.
	time.Sleep(time.Second)
	before := r.cpu()
	time.Sleep(5 * time.Second)
	t.Logf("daemon CPU with an idle task page open for 5s: %v", r.cpu()-before)

	// The statistics of what ran.
	b.run(chromedp.Navigate(base + "/stats"))
	b.waitJS("the charts", `document.querySelectorAll("figure.chart rect.bar").length > 0`, 10*time.Second)
	b.shot("dashboard-stats.png")

	// A phone-sized overview.
	b.run(chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/"))
	b.waitJS("the overview", `!!document.querySelector("#task-alpha")`, 10*time.Second)
	b.shot("dashboard-phone.png")
}

func orZero(s string) string {
	if strings.TrimSpace(s) == "" {
		return "0"
	}
	return strings.TrimSpace(s)
}

func jsInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
