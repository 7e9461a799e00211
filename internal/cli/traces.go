package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/engine"
	"ralph/internal/redact"
	"ralph/internal/tracing"
)

// traceFlush bounds the export of the last spans at exit: an unreachable
// collector costs this much, never a hung ralph.
const traceFlush = 5 * time.Second

// startTraces starts the OTLP exporter when an endpoint is given (the
// setting, else OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); stop flushes it, bounded. The
// OTLP headers, which may hold a collector's credentials, are withheld
// from every agent whether traces are on or not.
func startTraces(ctx context.Context, endpoint string, warn io.Writer) (tr *tracing.Tracer, stop func(), err error) {
	agent.Withhold(tracing.Secrets...)
	for _, name := range tracing.Secrets {
		// Each header's value ("Authorization=Bearer …") is masked
		// wherever ralph writes, as every known secret is.
		for _, h := range strings.Split(os.Getenv(name), ",") {
			if _, v, ok := strings.Cut(h, "="); ok && strings.TrimSpace(v) != "" {
				redact.Add(strings.TrimSpace(v))
			}
		}
	}
	tr, err = tracing.Start(ctx, tracing.Options{Endpoint: endpoint, Getenv: os.Getenv})
	if err != nil {
		return nil, nil, err
	}
	return tr, func() {
		if err := tr.Shutdown(traceFlush); err != nil {
			fmt.Fprintf(warn, "ralph: warning: traces: %v\n", err)
		}
	}, nil
}

// traceRun feeds the loop's events to run before any other observer sees
// them, and hands each agent call its span's trace context.
func traceRun(deps *engine.Deps, run *tracing.Run) {
	if run == nil {
		return
	}
	deps.Emit, deps.CallEnv = run.Observe, run.CallEnv
}
