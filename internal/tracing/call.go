package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"ralph/internal/loop"
)

// StartCall begins the spans of one agent call made for a loop decided
// elsewhere (a Temporal worker's ralph.iterate activity): a root span
// named for the activity, with the task's id, under which the call's
// iteration_start event opens the iteration and the agent call as in a
// loop run. Measured ends them with what the call used.
func (t *Tracer) StartCall(info RunInfo, attempt int) *Run {
	if t == nil {
		return nil
	}
	attrs := []attribute.KeyValue{attribute.String("ralph.backend", "temporal"), attribute.Int("ralph.attempt", attempt)}
	for _, a := range []struct{ k, v string }{{AttrTaskID, info.TaskID}, {AttrSession, info.Session}} {
		if a.v != "" {
			attrs = append(attrs, attribute.String(a.k, a.v))
		}
	}
	ctx, span := t.tracer.Start(context.Background(), "ralph.iterate", trace.WithNewRoot(), trace.WithAttributes(attrs...))
	return &Run{t: t, info: info, ctx: ctx, run: span}
}

// Measured closes a call started by StartCall with its measurement; the
// decision is the workflow's, made after.
func (r *Run) Measured(it loop.Iteration) {
	if r == nil {
		return
	}
	u := it.Observed.Usage
	r.mu.Lock()
	r.iterationEnd(loop.Metrics{Loop: it.Loop, StartedAt: it.Started, DurationMS: it.Ended.Sub(it.Started).Milliseconds(),
		ExitCode: it.ExitCode, TimedOut: it.TimedOut, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheCreationTokens: u.CacheCreationInputTokens, CostUSD: u.CostUSD,
		FilesChanged: it.Files, Progress: it.Changed, Status: it.Observed.Status, Decision: "measured"}, it.Ended)
	r.mu.Unlock()
	r.End()
}
