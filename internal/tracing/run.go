package tracing

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"ralph/internal/loop"
)

// Attribute names of ralph's own (the GenAI ones are the semantic
// conventions').
const (
	AttrTaskID    = "ralph.task.id"
	AttrSession   = "ralph.session"
	AttrProject   = "ralph.project"
	AttrLoop      = "ralph.loop"
	AttrAgent     = "ralph.agent"
	AttrDecision  = "ralph.decision"
	AttrReason    = "ralph.reason"
	AttrCostUSD   = "ralph.cost_usd"
	AttrWaitKind  = "ralph.wait.kind"
	AttrExitCode  = "ralph.exit_code"
	AttrVerifyRes = "ralph.verify.result"
)

// RunInfo names a loop run.
type RunInfo struct {
	// TaskID and Session are the fleet's task and session (empty for
	// `ralph run`, which names its Project).
	TaskID, Session, Project string
	// Backend is "local" or "temporal".
	Backend string
	// Agents give each agent's model.
	Agents []loop.AgentSpec
}

// Run is the spans of one loop run, fed by its events in order (Observe);
// nil does nothing.
type Run struct {
	t      *Tracer
	info   RunInfo
	mu     sync.Mutex
	ctx    context.Context // the run span's
	run    trace.Span
	first  int // the first loop number of the run
	iter   trace.Span
	iterN  int
	iterCx context.Context
	call   trace.Span
	wait   trace.Span
	waitK  string
	done   bool
}

// Start begins a loop run's span (linked to the task's previous run, if
// this process saw it).
func (t *Tracer) Start(info RunInfo) *Run {
	if t == nil {
		return nil
	}
	attrs := []attribute.KeyValue{attribute.String("ralph.backend", orDefault(info.Backend, "local"))}
	for _, a := range []struct{ k, v string }{{AttrTaskID, info.TaskID}, {AttrSession, info.Session}, {AttrProject, info.Project}} {
		if a.v != "" {
			attrs = append(attrs, attribute.String(a.k, a.v))
		}
	}
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithAttributes(attrs...)}
	if sc, ok := t.lastRun(info.TaskID); ok && info.TaskID != "" {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("ralph.link", "previous_run")}}))
	}
	ctx, span := t.tracer.Start(context.Background(), "loop run", opts...)
	t.remember(info.TaskID, span.SpanContext())
	return &Run{t: t, info: info, ctx: ctx, run: span}
}

// Observe turns one loop event into spans. It never blocks: a host calls
// it from the engine's own goroutine, before the event's other observers,
// so that the agent call's span exists when CallEnv is asked for it.
func (r *Run) Observe(ev loop.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	at := ev.At
	if at.IsZero() {
		at = time.Now()
	}
	switch ev.Type {
	case loop.EventStart:
		r.first = ev.Loop + 1
		r.run.SetAttributes(attribute.Int("ralph.loop.first", r.first), attribute.String(AttrAgent, ev.Agent))
	case loop.EventIterationStart:
		r.endWait(at, "call")
		r.endIteration(at)
		r.iterN = ev.Loop
		r.iterCx, r.iter = r.t.tracer.Start(r.ctx, fmt.Sprintf("iteration %d", ev.Loop), trace.WithTimestamp(at),
			trace.WithAttributes(attribute.Int(AttrLoop, ev.Loop), attribute.String(AttrAgent, ev.Agent)))
		_, r.call = r.t.tracer.Start(r.iterCx, "invoke_agent "+ev.Agent, trace.WithTimestamp(at),
			trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(r.callAttrs(ev)...))
	case loop.EventVerify:
		if ev.Verify != nil {
			r.verify(*ev.Verify)
		}
	case loop.EventIterationEnd:
		if ev.Iteration != nil {
			r.iterationEnd(*ev.Iteration, at)
		}
	case loop.EventWait, loop.EventPaused:
		kind := ev.WaitKind
		if ev.Type == loop.EventPaused {
			kind = loop.WaitPaused
		}
		if r.wait != nil && r.waitK == kind {
			return // the same wait, announced again
		}
		r.endWait(at, "next")
		r.waitK = kind
		attrs := []attribute.KeyValue{attribute.String(AttrWaitKind, kind)}
		if !ev.Until.IsZero() {
			attrs = append(attrs, attribute.String("ralph.wait.until", ev.Until.UTC().Format(time.RFC3339)))
		}
		_, r.wait = r.t.tracer.Start(r.ctx, "wait "+kind, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
	case loop.EventResumed:
		r.endWait(at, "resumed")
	case loop.EventStop, loop.EventError:
		r.endWait(at, "stop")
		r.endIteration(at)
		attrs := []attribute.KeyValue{attribute.String(AttrDecision, "stop"), attribute.Int(AttrExitCode, ev.ExitCode)}
		if ev.Reason != "" {
			attrs = append(attrs, attribute.String(AttrReason, string(ev.Reason)))
		}
		if r.first > 0 {
			attrs = append(attrs, attribute.Int("ralph.loops", max(0, ev.Loop-r.first+1)))
		}
		r.run.SetAttributes(attrs...)
		if ev.Type == loop.EventError {
			r.run.SetStatus(codes.Error, "the run ended on an error")
		}
		r.run.End(trace.WithTimestamp(at))
		r.done = true
	}
}

// End ends whatever is still open (a host whose engine returned without a
// stop event, after a panic or a start-up error).
func (r *Run) End() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	now := time.Now()
	r.endWait(now, "stop")
	r.endIteration(now)
	r.run.End(trace.WithTimestamp(now))
	r.done = true
}

// CallEnv is what the agent call in progress gets in its environment: its
// span's W3C TRACEPARENT (an agent that traces itself, such as Claude Code
// with its telemetry on, hangs its spans under it), and the endpoint when
// ralph had it from a setting. Never the OTLP headers (Secrets).
func (r *Run) CallEnv() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.call == nil || !r.call.SpanContext().IsValid() {
		return nil
	}
	return append([]string{"TRACEPARENT=" + traceparent(r.call.SpanContext())}, r.t.env...)
}

func (r *Run) callAttrs(ev loop.Event) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", ev.Agent),
		attribute.Int(AttrLoop, ev.Loop),
	}
	model := ""
	for _, a := range r.info.Agents {
		if a.Name == ev.Agent {
			model = a.Model
		}
	}
	if p := provider(ev.Agent, model); p != "" {
		// gen_ai.system is the name older backends read;
		// gen_ai.provider.name replaced it in the conventions.
		attrs = append(attrs, attribute.String("gen_ai.system", p), attribute.String("gen_ai.provider.name", p))
	}
	if model != "" {
		attrs = append(attrs, attribute.String("gen_ai.request.model", model))
	}
	if ev.Session != "" {
		attrs = append(attrs, attribute.String("gen_ai.conversation.id", ev.Session))
	}
	return attrs
}

// iterationEnd closes the agent call at the end the record gives (the
// verify run and the bookkeeping after it belong to the iteration) and
// the iteration with ralph's decision.
func (r *Run) iterationEnd(m loop.Metrics, at time.Time) {
	if r.iter == nil && !m.StartedAt.IsZero() {
		// A loop whose calls run elsewhere (a Temporal worker, which
		// traces the call) reports only the record: the iteration is
		// drawn from it.
		r.endIteration(at)
		r.iterN = m.Loop
		r.iterCx, r.iter = r.t.tracer.Start(r.ctx, fmt.Sprintf("iteration %d", m.Loop), trace.WithTimestamp(m.StartedAt),
			trace.WithAttributes(attribute.Int(AttrLoop, m.Loop), attribute.String(AttrAgent, m.Agent), attribute.Bool("ralph.call_elsewhere", true)))
	}
	if r.iter == nil || m.Loop != r.iterN {
		return
	}
	decision, why, _ := strings.Cut(m.Decision, ":")
	if r.call != nil {
		r.call.SetAttributes(
			attribute.Int64("gen_ai.usage.input_tokens", m.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", m.OutputTokens),
			attribute.Int64("gen_ai.usage.cache_read.input_tokens", m.CacheReadTokens),
			attribute.Int64("gen_ai.usage.cache_creation.input_tokens", m.CacheCreationTokens),
			attribute.Float64(AttrCostUSD, m.CostUSD),
			attribute.Int(AttrExitCode, m.ExitCode),
		)
		if m.Failed || m.ExitCode != 0 || m.TimedOut {
			r.call.SetStatus(codes.Error, fmt.Sprintf("the agent call failed (exit code %d)", m.ExitCode))
		}
		end := at
		if !m.StartedAt.IsZero() {
			end = m.StartedAt.Add(time.Duration(m.DurationMS) * time.Millisecond)
		}
		r.call.End(trace.WithTimestamp(end))
		r.call = nil
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrDecision, decision), attribute.Bool("ralph.progress", m.Progress),
		attribute.Int("ralph.files_changed", m.FilesChanged), attribute.String("ralph.status", m.Status),
		attribute.String("ralph.circuit_breaker", m.Breaker), attribute.Float64(AttrCostUSD, m.CostUSD),
		attribute.Int64("gen_ai.usage.input_tokens", m.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", m.OutputTokens),
	}
	if why != "" {
		attrs = append(attrs, attribute.String(AttrReason, why))
	}
	if m.Verify != nil {
		attrs = append(attrs, attribute.Bool("ralph.verified", m.Verified))
	}
	r.iter.SetAttributes(attrs...)
	r.iter.End(trace.WithTimestamp(at))
	r.iter, r.iterCx = nil, nil
}

// verify records a verify run: under its iteration when it checked that
// iteration's claim, under the run when the loop checked one on its own.
func (r *Run) verify(v loop.VerifyRun) {
	parent := r.ctx
	if r.iterCx != nil {
		parent = r.iterCx
	}
	end := v.Ended
	if end.IsZero() {
		end = time.Now()
	}
	start := end.Add(-time.Duration(v.DurationMS) * time.Millisecond)
	result := "passed"
	switch {
	case v.StartErr != "":
		result = "not_started"
	case v.TimedOut:
		result = "timed_out"
	case v.ExitCode != 0:
		result = "failed"
	}
	// The command is the project's own setting; its output (Tail) is not
	// kept: it may quote anything.
	_, s := r.t.tracer.Start(parent, "verify", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String(AttrVerifyRes, result), attribute.Int(AttrExitCode, v.ExitCode), attribute.Bool("ralph.verify.timed_out", v.TimedOut)))
	if result != "passed" {
		s.SetStatus(codes.Error, "verify "+result)
	}
	s.End(trace.WithTimestamp(end))
}

func (r *Run) endWait(at time.Time, by string) {
	if r.wait == nil {
		return
	}
	r.wait.SetAttributes(attribute.String("ralph.wait.ended_by", by))
	r.wait.End(trace.WithTimestamp(at))
	r.wait, r.waitK = nil, ""
}

// endIteration ends an iteration that got no record (an interrupted call).
func (r *Run) endIteration(at time.Time) {
	if r.call != nil {
		r.call.SetStatus(codes.Error, "interrupted")
		r.call.End(trace.WithTimestamp(at))
		r.call = nil
	}
	if r.iter != nil {
		r.iter.SetAttributes(attribute.Bool("ralph.interrupted", true))
		r.iter.End(trace.WithTimestamp(at))
		r.iter, r.iterCx = nil, nil
	}
}

// provider is the gen_ai.provider.name of an agent's calls ("" when it
// cannot be told: an arbitrary command).
func provider(agent, model string) string {
	switch agent {
	case "claude":
		return "anthropic"
	case "codex":
		return "openai"
	case "gemini":
		return "gcp.gemini"
	}
	// OpenCode names its models provider/model.
	if p, _, ok := strings.Cut(model, "/"); ok && p != "" {
		return p
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
