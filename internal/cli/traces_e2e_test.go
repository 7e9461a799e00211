package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/syncbuf"
	"ralph/internal/tracing/jaegertest"
)

// traceOf is the one trace of service with a loop run in it.
func traceOf(t *testing.T, j *jaegertest.Server, service string, tags map[string]string, spans int) jaegertest.Trace {
	t.Helper()
	trs := j.WaitTraces(service, tags, 60*time.Second, func(trs []jaegertest.Trace) bool {
		return len(trs) == 1 && len(trs[0].Spans) >= spans
	})
	return trs[0]
}

// spanTree checks a run's trace: the loop run at its root, n iterations
// under it, in each the agent call with the model and its tokens, and
// returns the iterations and their calls in order.
func spanTree(t *testing.T, tr jaegertest.Trace, n int, model string) (root jaegertest.Span, iters, calls []jaegertest.Span) {
	t.Helper()
	byID := map[string]jaegertest.Span{}
	for _, s := range tr.Spans {
		byID[s.SpanID] = s
		if s.Name == "loop run" {
			root = s
		}
	}
	if root.SpanID == "" || root.ParentID != "" {
		t.Fatalf("no loop run at the root:\n%s", jaegertest.Dump([]jaegertest.Trace{tr}))
	}
	for i := 1; i <= n; i++ {
		var it, call jaegertest.Span
		for _, s := range tr.Spans {
			if s.Name == fmt.Sprintf("iteration %d", i) && s.ParentID == root.SpanID {
				it = s
			}
		}
		for _, s := range tr.Spans {
			if s.Name == "invoke_agent claude" && it.SpanID != "" && s.ParentID == it.SpanID {
				call = s
			}
		}
		if it.SpanID == "" || call.SpanID == "" {
			t.Fatalf("iteration %d or its agent call is missing or misplaced:\n%s", i, jaegertest.Dump([]jaegertest.Trace{tr}))
		}
		if call.Tag("gen_ai.request.model") != model || call.Tag("gen_ai.system") != "anthropic" || call.Tag("gen_ai.operation.name") != "invoke_agent" {
			t.Errorf("agent call %d: %v", i, call.Tags)
		}
		iters, calls = append(iters, it), append(calls, call)
	}
	return root, iters, calls
}

// sawTrace checks that each agent call got its own span's trace context.
func sawTrace(t *testing.T, scriptPath string, calls []jaegertest.Span) {
	t.Helper()
	got, err := script.Calls(scriptPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(calls) {
		t.Fatalf("the agent was called %d times, want %d", len(got), len(calls))
	}
	for i, c := range got {
		want := "00-" + calls[i].TraceID + "-" + calls[i].SpanID + "-01"
		if c.TraceParent != want {
			t.Errorf("call %d saw TRACEPARENT=%q, want %q (its agent call span)", i+1, c.TraceParent, want)
		}
		for _, n := range c.EnvNames {
			if strings.HasPrefix(n, "OTEL_EXPORTER_OTLP_") && strings.HasSuffix(n, "HEADERS") {
				t.Errorf("call %d got %s: the collector's credentials reached the agent", i+1, n)
			}
		}
		if !slices.Contains(c.EnvNames, "OTEL_EXPORTER_OTLP_ENDPOINT") {
			t.Errorf("call %d has no OTEL_EXPORTER_OTLP_ENDPOINT: its own telemetry cannot join", i+1)
		}
	}
}

// The real `ralph run` exports its loop to a real Jaeger: one trace, the
// loop run at its root, each iteration under it with the agent call (the
// model, the tokens) and ralph's decision and reason, and each agent call
// saw its own span as TRACEPARENT. The collector's headers, which may hold
// its credentials, never reach the agent.
func TestRunExportsTraces(t *testing.T) {
	j := jaegertest.Start(t)
	ralph, fake, work := servetest.Ralph(t), servetest.Fake(t), t.TempDir()
	service := "ralph-run-" + filepath.Base(work)
	env := append(servetest.Env(work, filepath.Join(work, "home")), "OTEL_EXPORTER_OTLP_ENDPOINT="+j.OTLP,
		"OTEL_SERVICE_NAME="+service, "OTEL_BSP_SCHEDULE_DELAY=200", "OTEL_EXPORTER_OTLP_HEADERS=x-collector-token=hush-1234")
	dir := filepath.Join(work, "proj")
	scriptPath := filepath.Join(work, "agent.json")
	if err := (script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{"one.txt": "1\n"}, StdoutLines: []json.RawMessage{
			servetest.Result{Session: "s", Text: "One." + servetest.RalphStatus("IN_PROGRESS", false, 1), InputTokens: 120, OutputTokens: 30, CostUSD: 0.25}.Line()}},
		{Files: map[string]string{"two.txt": "2\n", ".ralph/fix_plan.md": "# Plan\n\n- [x] one\n- [x] two\n"}, StdoutLines: []json.RawMessage{
			servetest.Result{Session: "s", Text: "Done." + servetest.CompleteStatus, InputTokens: 80, OutputTokens: 20, CostUSD: 0.125}.Line()}},
	}}).Write(scriptPath); err != nil {
		t.Fatal(err)
	}
	if err := servetest.Repo(ralph, env, dir, map[string]string{
		".ralphrc":           fmt.Sprintf("CLAUDE_CODE_CMD=\"env %s=%s %s\"\nCLAUDE_MODEL=test-model-1\nMAX_CALLS_PER_HOUR=10000\n", script.EnvScript, scriptPath, fake),
		".ralph/PROMPT.md":   "Work on the plan.\n",
		".ralph/fix_plan.md": "# Plan\n\n- [ ] one\n- [ ] two\n",
		".ralph/AGENT.md":    "nothing to build\n",
	}); err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	run := servetest.Start(t, log, ralph, env, "run", "-C", dir, "--max-loops", "5")
	for deadline := time.Now().Add(90 * time.Second); run.Running(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("ralph run did not end:\n%s", log.String())
		}
	}
	if err := run.Stop(); err != nil {
		t.Fatalf("ralph run: %v\n%s", err, log.String())
	}
	tr := traceOf(t, j, service, nil, 5)
	root, iters, calls := spanTree(t, tr, 2, "test-model-1")
	if root.Tag("ralph.project") != "proj" || root.Tag("ralph.decision") != "stop" || root.Tag("ralph.reason") == "" {
		t.Errorf("loop run: %v", root.Tags)
	}
	if iters[0].Tag("ralph.decision") != "continue" || iters[1].Tag("ralph.decision") != "stop" || iters[1].Tag("ralph.reason") != root.Tag("ralph.reason") {
		t.Errorf("decisions: %v / %v", iters[0].Tags, iters[1].Tags)
	}
	if calls[0].Tag("gen_ai.usage.input_tokens") != "120" || calls[0].Tag("gen_ai.usage.output_tokens") != "30" || calls[0].Tag("ralph.cost_usd") != "0.25" {
		t.Errorf("first call's usage: %v", calls[0].Tags)
	}
	for _, s := range tr.Spans {
		for k, v := range s.Tags {
			if strings.Contains(fmt.Sprint(v), "hush-1234") || strings.Contains(fmt.Sprint(v), "Work on the plan") {
				t.Errorf("span %q tag %s carries a secret or the prompt: %v", s.Name, k, v)
			}
		}
	}
	sawTrace(t, scriptPath, calls)
}

// A real `ralph serve` task exports each loop run of it: the run names the
// task, each iteration holds its agent call and its verify run, and the
// agent saw its call's trace context.
func TestServeExportsTraces(t *testing.T) {
	j := jaegertest.Start(t)
	r := servetest.New(t, servetest.Options{})
	service := "ralph-serve-" + filepath.Base(r.Work)
	r.Env = append(r.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+j.OTLP, "OTEL_SERVICE_NAME="+service, "OTEL_BSP_SCHEDULE_DELAY=200", "RALPH_CLAUDE_MODEL=test-model-2",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=x-collector-token=hush-5678",
		`RALPH_VERIFY_CMD=grep -q ok state.txt || { echo "state.txt is not ok"; exit 3; }`)
	done := func(files map[string]string) script.Iteration {
		return script.Iteration{Files: files, StdoutLines: []json.RawMessage{
			servetest.Result{Session: "s", Text: "All done." + servetest.CompleteStatus, InputTokens: 7, OutputTokens: 3}.Line()}}
	}
	_, scriptPath := r.Session("v", script.Script{Iterations: []script.Iteration{
		done(map[string]string{"one.txt": "1\n"}),
		done(map[string]string{"state.txt": "ok\n"}),
	}})
	r.Start(1)
	r.OK("start", "--loop", "5", "v", "Make the state ok")
	v := r.WaitFor("v", "the task done", servetest.StateIs("done"))
	tr := traceOf(t, j, service, map[string]string{"ralph.task.id": v.ID}, 7)
	root, iters, calls := spanTree(t, tr, 2, "test-model-2")
	if root.Tag("ralph.task.id") != v.ID || root.Tag("ralph.session") != "v" {
		t.Errorf("loop run: %v", root.Tags)
	}
	for i, want := range []string{"failed", "passed"} {
		var verify jaegertest.Span
		for _, s := range tr.Spans {
			if s.Name == "verify" && s.ParentID == iters[i].SpanID {
				verify = s
			}
		}
		if verify.Tag("ralph.verify.result") != want {
			t.Errorf("iteration %d's verify run: %v, want %s", i+1, verify.Tags, want)
		}
	}
	if iters[1].Tag("ralph.decision") != "stop" || iters[1].Tag("ralph.verified") != "true" {
		t.Errorf("the last iteration: %v", iters[1].Tags)
	}
	sawTrace(t, scriptPath, calls)
}

// On the Temporal backend a real `ralph worker` exports each agent call as
// a trace of its own (the activity, with the task's id) and hands the call
// that span's trace context; the daemon exports the loop run from the
// events the workers send back.
func TestTemporalExportsTraces(t *testing.T) {
	j := jaegertest.Start(t)
	r := newTemporalRig(t)
	service := "ralph-temporal-" + filepath.Base(r.Work)
	r.Env = append(r.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+j.OTLP, "OTEL_SERVICE_NAME="+service, "OTEL_BSP_SCHEDULE_DELAY=200",
		"RALPH_CLAUDE_MODEL=test-model-3")
	_, scriptPath := r.Session("w", script.Script{Iterations: []script.Iteration{
		{Files: map[string]string{"one.txt": "1\n"}, StdoutLines: []json.RawMessage{
			servetest.Result{Session: "s", Text: "One." + servetest.RalphStatus("IN_PROGRESS", false, 1), InputTokens: 5, OutputTokens: 1}.Line()}},
		{Files: map[string]string{"two.txt": "2\n"}, StdoutLines: []json.RawMessage{
			servetest.Result{Session: "s", Text: "Done." + servetest.CompleteStatus, InputTokens: 6, OutputTokens: 2}.Line()}},
	}})
	r.worker("a")
	r.Start(1)
	r.OK("start", "--loop", "2", "w", "Two steps")
	v := r.WaitFor("w", "the task's two loops", func(v serve.TaskView) bool { return v.LoopCount == 2 && v.State != "running" })
	trs := j.WaitTraces(service, map[string]string{"ralph.task.id": v.ID}, 60*time.Second, func(trs []jaegertest.Trace) bool {
		calls, iters := 0, 0
		for _, tr := range trs {
			for _, s := range tr.Spans {
				switch {
				case s.Name == "ralph.iterate":
					calls++
				case strings.HasPrefix(s.Name, "iteration ") && s.Tag("ralph.call_elsewhere") == "true":
					iters++
				}
			}
		}
		return calls == 2 && iters == 2
	})
	var calls []jaegertest.Span
	runs := 0
	for _, tr := range trs {
		for _, s := range tr.Spans {
			switch {
			case s.Name == "loop run":
				runs++
			case s.Name == "invoke_agent claude" && s.Tag("gen_ai.request.model") == "test-model-3":
				calls = append(calls, s)
			}
		}
	}
	slices.SortFunc(calls, func(a, b jaegertest.Span) int { return a.Start.Compare(b.Start) })
	if runs == 0 || len(calls) != 2 {
		t.Fatalf("want the daemon's loop run and the worker's two agent calls:\n%s", jaegertest.Dump(trs))
	}
	sawTrace(t, scriptPath, calls)
}

// A question's wait is a span of the run that asked, between the asking
// iteration and the answered one: the answer goes on in the same run.
func TestServeQuestionWaitIsTraced(t *testing.T) {
	j := jaegertest.Start(t)
	r := servetest.New(t, servetest.Options{})
	service := "ralph-question-" + filepath.Base(r.Work)
	r.Env = append(r.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+j.OTLP, "OTEL_SERVICE_NAME="+service, "OTEL_BSP_SCHEDULE_DELAY=200")
	r.Session("b", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-b", "I cannot pick a database."+servetest.Question("PostgreSQL or SQLite?"))}},
		{Files: map[string]string{"db.txt": "sqlite\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-b", "Used SQLite, all done."+servetest.CompleteStatus)}},
	}})
	r.Start(1)
	r.OK("start", "--loop", "5", "b", "Store things")
	v := r.WaitFor("b", "waiting on a question", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	r.OK("answer", "b", "Use", "SQLite.")
	r.WaitFor("b", "done", servetest.StateIs("done"))
	trs := j.WaitTraces(service, map[string]string{"ralph.task.id": v.ID}, 60*time.Second, func(trs []jaegertest.Trace) bool {
		for _, tr := range trs {
			for _, s := range tr.Spans {
				if s.Name == "loop run" && s.Tag("ralph.reason") == "project_complete" {
					return true
				}
			}
		}
		return false
	})
	// The question is a wait inside the run that asked: one run, one
	// trace, the wait between the asking iteration and the answered one.
	if len(trs) != 1 {
		t.Fatalf("want the task's one run in one trace:\n%s", jaegertest.Dump(trs))
	}
	var run, wait, asking, answered jaegertest.Span
	for _, s := range trs[0].Spans {
		switch {
		case s.Name == "loop run":
			run = s
		case s.Name == "wait answer":
			wait = s
		case s.Name == "iteration 1":
			asking = s
		case s.Name == "iteration 2":
			answered = s
		}
	}
	if run.SpanID == "" || wait.ParentID != run.SpanID || wait.Tag("ralph.wait.kind") != "answer" {
		t.Errorf("the question's wait is not a span of the run that asked:\n%s", jaegertest.Dump(trs))
	}
	if asking.Tag("ralph.decision") != "wait" || asking.Tag("ralph.reason") != "needs_clarification" || answered.Tag("ralph.reason") != "project_complete" {
		t.Errorf("the iterations around the wait:\n%s", jaegertest.Dump(trs))
	}
	for _, s := range trs[0].Spans {
		if s.Name == "wait question" {
			t.Errorf("a second span for the same wait:\n%s", jaegertest.Dump(trs))
		}
	}
}
