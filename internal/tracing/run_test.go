package tracing

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"ralph/internal/loop"
	"ralph/internal/reason"
)

func recorder() (*Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	return New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))), rec
}

func attrs(s sdktrace.ReadOnlySpan) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// A run's events make the span tree: the run, a wait under it, each
// iteration under it with the agent call and the verify run under the
// iteration; the call carries the model and its tokens, the iteration
// ralph's decision and reason, and the agent's environment the call's
// trace context.
func TestRunSpans(t *testing.T) {
	tr, rec := recorder()
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	run := tr.Start(RunInfo{TaskID: "t1", Session: "api", Agents: []loop.AgentSpec{{Name: "claude", Model: "opus"}}})
	var env []string
	for i, ev := range []loop.Event{
		{Type: loop.EventStart, Agent: "claude"},
		{Type: loop.EventWait, WaitKind: loop.WaitUsageLimit, Until: at.Add(time.Hour)},
		{Type: loop.EventWait, WaitKind: loop.WaitUsageLimit, Until: at.Add(time.Hour)},
		{Type: loop.EventIterationStart, Loop: 1, Agent: "claude", Session: "s-1"},
		{Type: loop.EventIterationEnd, Loop: 1, Iteration: &loop.Metrics{Loop: 1, StartedAt: at, DurationMS: 1000, InputTokens: 10, OutputTokens: 20, CostUSD: 0.5, Decision: "continue"}},
		{Type: loop.EventIterationStart, Loop: 2, Agent: "claude"},
		{Type: loop.EventVerify, Loop: 2, Verify: &loop.VerifyRun{Ended: at.Add(3 * time.Second), DurationMS: 500}},
		{Type: loop.EventIterationEnd, Loop: 2, Iteration: &loop.Metrics{Loop: 2, StartedAt: at, DurationMS: 1000, InputTokens: 1, OutputTokens: 2, Decision: "stop:plan_complete", Verify: &loop.VerifyRun{}, Verified: true}},
		{Type: loop.EventStop, Loop: 2, Reason: reason.PlanComplete},
	} {
		ev.At = at.Add(time.Duration(i) * time.Second)
		run.Observe(ev)
		if ev.Type == loop.EventIterationStart && ev.Loop == 2 {
			env = run.CallEnv()
		}
	}
	spans := rec.Ended()
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if _, dup := byName[s.Name()]; dup && s.Name() != "invoke_agent claude" {
			t.Fatalf("span %q twice", s.Name())
		}
		byName[s.Name()] = s
	}
	if len(spans) != 7 {
		t.Fatalf("got %d spans, want 7 (run, wait, 2 iterations, 2 calls, verify)", len(spans))
	}
	root, wait, it1, it2, verify := byName["loop run"], byName["wait usage_limit"], byName["iteration 1"], byName["iteration 2"], byName["verify"]
	for name, s := range map[string]sdktrace.ReadOnlySpan{"loop run": root, "wait": wait, "iteration 1": it1, "iteration 2": it2, "verify": verify} {
		if s == nil {
			t.Fatalf("no %s span in %v", name, spans)
		}
	}
	if root.Parent().IsValid() {
		t.Error("the run has a parent")
	}
	for _, s := range []sdktrace.ReadOnlySpan{wait, it1, it2} {
		if s.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("%s is not under the run", s.Name())
		}
	}
	if verify.Parent().SpanID() != it2.SpanContext().SpanID() {
		t.Error("the verify run is not under its iteration")
	}
	var call2 sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "invoke_agent claude" && s.Parent().SpanID() == it2.SpanContext().SpanID() {
			call2 = s
		}
	}
	if call2 == nil {
		t.Fatal("no agent call under iteration 2")
	}
	a := attrs(byName["invoke_agent claude"])
	for _, s := range spans {
		if s.Name() == "invoke_agent claude" && s.Parent().SpanID() == it1.SpanContext().SpanID() {
			a = attrs(s)
		}
	}
	if a["gen_ai.request.model"].AsString() != "opus" || a["gen_ai.system"].AsString() != "anthropic" ||
		a["gen_ai.usage.input_tokens"].AsInt64() != 10 || a["gen_ai.usage.output_tokens"].AsInt64() != 20 || a[AttrCostUSD].AsFloat64() != 0.5 {
		t.Errorf("agent call attributes: %v", a)
	}
	if got := attrs(it2); got[AttrDecision].AsString() != "stop" || got[AttrReason].AsString() != "plan_complete" || !got["ralph.verified"].AsBool() {
		t.Errorf("iteration 2 attributes: %v", got)
	}
	if got := attrs(root); got[AttrTaskID].AsString() != "t1" || got[AttrReason].AsString() != "plan_complete" {
		t.Errorf("run attributes: %v", got)
	}
	want := "TRACEPARENT=00-" + call2.SpanContext().TraceID().String() + "-" + call2.SpanContext().SpanID().String() + "-01"
	if len(env) != 1 || env[0] != want {
		t.Errorf("the agent's environment: %q, want [%s]", env, want)
	}
	if !wait.EndTime().Equal(at.Add(3 * time.Second)) {
		t.Errorf("the wait ended at %v, want when the call began", wait.EndTime())
	}
}

// A task's next run links to its last one, in a trace of its own.
func TestRunsOfATaskAreLinked(t *testing.T) {
	tr, rec := recorder()
	first := tr.Start(RunInfo{TaskID: "t1"})
	first.Observe(loop.Event{Type: loop.EventStop, Reason: reason.Interrupted})
	second := tr.Start(RunInfo{TaskID: "t1"})
	second.End()
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	run1, run2 := spans[0], spans[1]
	if len(run2.Links()) != 1 || run2.Links()[0].SpanContext.SpanID() != run1.SpanContext().SpanID() {
		t.Errorf("the second run's links: %v", run2.Links())
	}
	if run2.SpanContext().TraceID() == run1.SpanContext().TraceID() {
		t.Error("a run of days would be one trace: each run must start its own")
	}
}

// Traces are off without an endpoint, and a bad one is an error naming
// where it came from.
func TestStartOptions(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		o    Options
		on   bool
		fail string
	}{
		{o: Options{Getenv: env()}},
		{o: Options{Getenv: env(EnvEndpoint, "http://127.0.0.1:4318")}, on: true},
		{o: Options{Getenv: env(EnvTracesEndpoint, "http://127.0.0.1:4318/v1/traces")}, on: true},
		{o: Options{Endpoint: "http://127.0.0.1:4318", Getenv: env()}, on: true},
		{o: Options{Getenv: env(EnvEndpoint, "http://x:4318", "OTEL_SDK_DISABLED", "true")}},
		{o: Options{Getenv: env(EnvEndpoint, "http://x:4318", "OTEL_TRACES_EXPORTER", "none")}},
		{o: Options{Endpoint: "127.0.0.1:4318", Getenv: env()}, on: true, fail: "--otel-endpoint"},
		{o: Options{Getenv: env(EnvEndpoint, "localhost:4318")}, on: true, fail: EnvEndpoint},
		{o: Options{Getenv: env(EnvEndpoint, "http://x:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "thrift")}, on: true, fail: "OTEL_EXPORTER_OTLP_PROTOCOL"},
	} {
		if got := On(c.o); got != c.on {
			t.Errorf("On(%+v) = %v", c.o, got)
		}
		tr, err := Start(t.Context(), c.o)
		switch {
		case c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail)):
			t.Errorf("Start(%+v): %v, want an error naming %s", c.o, err, c.fail)
		case c.fail == "" && err != nil:
			t.Errorf("Start(%+v): %v", c.o, err)
		case c.fail == "" && (tr != nil) != c.on:
			t.Errorf("Start(%+v) on = %v", c.o, tr != nil)
		}
		if tr != nil {
			_ = tr.Shutdown(time.Second)
		}
	}
}

// A worker's call (the Temporal backend) is a trace of its own named for
// the activity, with the task's id, holding the iteration and the agent
// call with what it used; the decision is the workflow's, not the
// worker's.
func TestWorkerCallSpans(t *testing.T) {
	tr, rec := recorder()
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	run := tr.StartCall(RunInfo{TaskID: "t9", Session: "api", Agents: []loop.AgentSpec{{Name: "codex", Model: "gpt-x"}}}, 2)
	run.Observe(loop.Event{Type: loop.EventIterationStart, At: at, Loop: 4, Agent: "codex"})
	if env := run.CallEnv(); len(env) != 1 || !strings.HasPrefix(env[0], "TRACEPARENT=00-") {
		t.Errorf("the call's environment: %q", env)
	}
	it := loop.Iteration{Loop: 4, Agent: "codex", Started: at, Ended: at.Add(time.Minute)}
	it.Observed.Usage.InputTokens, it.Observed.Usage.OutputTokens = 40, 4
	run.Measured(it)
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want 3", len(spans))
	}
	call, iter, root := spans[0], spans[1], spans[2]
	if root.Name() != "ralph.iterate" || attrs(root)[AttrTaskID].AsString() != "t9" || attrs(root)["ralph.attempt"].AsInt64() != 2 {
		t.Errorf("root %q %v", root.Name(), attrs(root))
	}
	if iter.Name() != "iteration 4" || iter.Parent().SpanID() != root.SpanContext().SpanID() || call.Parent().SpanID() != iter.SpanContext().SpanID() {
		t.Errorf("tree: %q under %v, %q under %v", iter.Name(), iter.Parent().SpanID(), call.Name(), call.Parent().SpanID())
	}
	a := attrs(call)
	if a["gen_ai.system"].AsString() != "openai" || a["gen_ai.request.model"].AsString() != "gpt-x" || a["gen_ai.usage.input_tokens"].AsInt64() != 40 {
		t.Errorf("call attributes: %v", a)
	}
	if !call.EndTime().Equal(at.Add(time.Minute)) {
		t.Errorf("the call ended at %v", call.EndTime())
	}
}

// A run whose calls are made elsewhere (the daemon following a Temporal
// workflow) hears only the records: each becomes its iteration, with the
// decision, under the run.
func TestRunOfRecordsOnly(t *testing.T) {
	tr, rec := recorder()
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	run := tr.Start(RunInfo{TaskID: "t2", Backend: "temporal"})
	run.Observe(loop.Event{Type: loop.EventIterationEnd, At: at.Add(time.Minute), Loop: 1,
		Iteration: &loop.Metrics{Loop: 1, Agent: "claude", StartedAt: at, DurationMS: 50000, Decision: "continue"}})
	run.Observe(loop.Event{Type: loop.EventStop, At: at.Add(2 * time.Minute), Reason: reason.MaxLoops})
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want the iteration and the run", len(spans))
	}
	it, root := spans[0], spans[1]
	if it.Name() != "iteration 1" || it.Parent().SpanID() != root.SpanContext().SpanID() || !it.StartTime().Equal(at) ||
		attrs(it)[AttrDecision].AsString() != "continue" {
		t.Errorf("iteration %q from %v: %v", it.Name(), it.StartTime(), attrs(it))
	}
}
