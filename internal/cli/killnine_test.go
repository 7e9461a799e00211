package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/breaker"
	"ralph/internal/loop"
	"ralph/internal/servetest"
	"ralph/internal/store"
)

// A result line of the fake agent: a little work, its cost, a status block.
func killScriptLine(text, status string) json.RawMessage {
	return servetest.Result{Session: "s-{{call}}", Text: text + "\n---RALPH_STATUS---\nSTATUS: " + status + "\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---",
		CostUSD: 0.01, InputTokens: 100, OutputTokens: 10}.Line()
}

// `kill -9` at random moments — during the agent call, the git snapshots,
// the state save, the metrics append — never loses or double-counts a call,
// a breaker transition or a metrics line: after 100 kills and a clean
// finish, the state document, metrics.jsonl, the rate-limit window and the
// breaker's history tell the same story.
func TestKillNineNeverLosesOrDoubleCounts(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	trials := 100
	if testing.Short() {
		trials = 20
	}
	// Without the race detector: it would slow the process down and move
	// where the random kills land.
	ralph, fake := servetest.PlainRalph(t), servetest.Fake(t)
	work := t.TempDir()
	dir := filepath.Join(work, "proj")
	os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755)
	for name, content := range map[string]string{"PROMPT.md": "Work.\n", "fix_plan.md": "- [ ] one\n- [ ] two\n", "AGENT.md": "go test\n"} {
		os.WriteFile(filepath.Join(dir, ".ralph", name), []byte(content), 0o644)
	}
	env := append(servetest.Env(work, filepath.Join(work, "home")),
		"RALPH_MAX_CALLS_PER_HOUR=100000", "RALPH_CB_NO_PROGRESS_THRESHOLD=50", "RALPH_FAKE_SCRIPT="+filepath.Join(work, "agent.json"))
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", a...)
		cmd.Dir, cmd.Env = dir, env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", a, err, b)
		}
	}
	// Progress, then two idle calls (the breaker half-opens), then
	// progress again (it closes): transitions to lose or repeat.
	var s script.Script
	for i := 0; i < 4; i++ {
		switch i {
		case 0, 3:
			s.Iterations = append(s.Iterations, script.Iteration{StdoutLines: []json.RawMessage{killScriptLine("Worked.", "IN_PROGRESS")},
				Files: map[string]string{"work.txt": "{{call}}\n"}})
		default:
			s.Iterations = append(s.Iterations, script.Iteration{StdoutLines: []json.RawMessage{killScriptLine("Looked around.", "IN_PROGRESS")}})
		}
	}
	for len(s.Iterations) < 4000 {
		s.Iterations = append(s.Iterations, s.Iterations[len(s.Iterations)%4])
	}
	b, _ := json.Marshal(s)
	os.WriteFile(filepath.Join(work, "agent.json"), b, 0o644)

	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for trial := 0; trial < trials; trial++ {
		cmd := exec.Command(ralph, "run", "-C", dir, "--agent-cmd", fake)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	// A child forked a moment before the last kill may hold the lock's
	// descriptor until it execs; wait for it rather than race it.
	st0, _ := store.Open(dir)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if l, err := st0.Lock(); err == nil {
			l.Release()
			break
		}
	}
	cmd := exec.Command(ralph, "run", "-C", dir, "--agent-cmd", fake, "--max-loops", "4")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 {
		t.Fatalf("final run: %v\n%s", err, out)
	}

	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc, ok, err := st.ReadState()
	if err != nil || !ok {
		t.Fatalf("state document: %v %v", ok, err)
	}
	var recs []loop.Metrics
	bad, err := store.ReadMetrics(st.MetricsFile(), func(_ int, raw json.RawMessage) error {
		var m loop.Metrics
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		recs = append(recs, m)
		return nil
	})
	if err != nil || len(bad) > 0 {
		t.Fatalf("metrics.jsonl: %v, bad lines %v", err, bad)
	}
	calls, _ := os.ReadFile(script.ArgvLog(filepath.Join(work, "agent.json")))
	t.Logf("%d kills; %d agent calls started, %d iterations recorded", trials, strings.Count(string(calls), "\n"), doc.Loop)
	if doc.Loop < 4 || len(recs) != doc.Loop {
		t.Fatalf("loop_count %d, metrics lines %d", doc.Loop, len(recs))
	}
	var cost float64
	for i, m := range recs {
		if m.Loop != i+1 {
			t.Fatalf("metrics line %d is loop %d: a record lost or written twice", i+1, m.Loop)
		}
		cost += m.CostUSD
	}
	if math.Abs(cost-doc.CostUSD) > 1e-6 || len(doc.Calls.Calls) != doc.Loop {
		t.Errorf("state: $%.2f over %d calls in the window; metrics: $%.2f over %d lines", doc.CostUSD, len(doc.Calls.Calls), cost, len(recs))
	}
	// Every change of the breaker between two records is in its history,
	// at the loop it happened, once.
	var want []string
	prev := breaker.Closed
	for _, m := range recs {
		if s := breaker.Status(m.Breaker); s != prev {
			want = append(want, fmt.Sprintf("%d:%s>%s", m.Loop, prev, s))
			prev = s
		}
	}
	var got []string
	for _, tr := range doc.Breaker.History {
		got = append(got, fmt.Sprintf("%d:%s>%s", tr.Loop, tr.From, tr.To))
	}
	if n := len(want) - len(got); n > 0 && len(got) == breaker.HistoryLimit {
		want = want[n:]
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("breaker history %v\nmetrics say %v", got, want)
	}
	var view breaker.State
	if err := store.ReadJSON(st.BreakerFile(), &view); err != nil || view.Status != doc.Breaker.Status || len(view.History) != len(doc.Breaker.History) {
		t.Errorf("breaker view %v: %+v", err, view.Status)
	}
}
