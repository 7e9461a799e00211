// Package tracing exports what ralph's loops do as OpenTelemetry traces over
// OTLP: a span per loop run (one `loop` command's stretch of iterations, never
// a whole task, which may last days), per iteration, per agent call, per
// verify run and per wait, with the GenAI semantic conventions for the model
// and its tokens and ralph's decision and reason as attributes.
//
// It is fed by the loop's own events (Run.Observe), so the engine knows
// nothing of it but one hook that hands the agent call its trace context
// (Run.CallEnv). It is off unless an OTLP endpoint is given; a nil *Tracer
// and a nil *Run do nothing. Spans never carry a prompt, the agent's output
// or a secret: only counts, names, codes and ralph's own reasons.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"ralph/internal/version"
)

// The variables of the OTLP exporter's environment ralph reads (the
// exporter reads the rest of the OTEL_EXPORTER_OTLP_* family itself).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envTracesExporter = "OTEL_TRACES_EXPORTER"
	envSDKDisabled    = "OTEL_SDK_DISABLED"
)

// Secrets are the OTEL variables that may carry credentials (an
// "Authorization=Bearer …" header): they reach no agent, which would hand
// them to whatever it runs. The hosts withhold them (agent.Withhold).
var Secrets = []string{
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
}

// Options say where traces go.
type Options struct {
	// Endpoint is a setting (--otel-endpoint): the OTLP base URL, as
	// OTEL_EXPORTER_OTLP_ENDPOINT would give it. It wins over the
	// environment.
	Endpoint string
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Service is service.name unless OTEL_SERVICE_NAME says otherwise.
	Service string
}

// Tracer makes the spans of one process's loops and exports them.
type Tracer struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	// env is what an agent call's environment gets besides TRACEPARENT:
	// the endpoint ralph was given by a setting, which the agent cannot
	// read from the environment it inherits.
	env []string

	mu sync.Mutex
	// last is each task's last loop run, which the next run links to (a
	// question is a wait inside the run, a span of the run's own).
	last map[string]trace.SpanContext
}

// maxTasks bounds the runs remembered for links: a daemon that runs for
// months forgets the oldest links, never the spans.
const maxTasks = 4096

// On reports whether o turns traces on: an endpoint given by a setting or
// by the environment, and neither OTEL_SDK_DISABLED nor
// OTEL_TRACES_EXPORTER=none saying no.
func On(o Options) bool {
	get := o.getenv()
	if strings.EqualFold(strings.TrimSpace(get(envSDKDisabled)), "true") || strings.TrimSpace(get(envTracesExporter)) == "none" {
		return false
	}
	return o.Endpoint != "" || get(EnvEndpoint) != "" || get(EnvTracesEndpoint) != ""
}

func (o Options) getenv() func(string) string {
	if o.Getenv == nil {
		return func(string) string { return "" }
	}
	return o.Getenv
}

// Start builds the exporter when o turns traces on; nil (and no error)
// when it does not. Shutdown flushes it.
func Start(ctx context.Context, o Options) (*Tracer, error) {
	if !On(o) {
		return nil, nil
	}
	get := o.getenv()
	for _, v := range []struct{ name, value string }{{"--otel-endpoint", o.Endpoint}, {EnvEndpoint, get(EnvEndpoint)}, {EnvTracesEndpoint, get(EnvTracesEndpoint)}} {
		if err := checkEndpoint(v.value); err != nil {
			return nil, fmt.Errorf("%s %q: %w", v.name, v.value, err)
		}
	}
	protocol := get(envTracesProtocol)
	if protocol == "" {
		protocol = get(envProtocol)
	}
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		var opts []otlptracehttp.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(o.Endpoint, "/")+"/v1/traces"))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	case "grpc":
		var opts []otlptracegrpc.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(o.Endpoint))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("%s %q: want http/protobuf or grpc", envProtocol, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	service := o.Service
	if service == "" {
		service = "ralph"
	}
	// The environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) comes
	// last: it wins over ralph's defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service), attribute.String("service.version", version.Version)),
		resource.WithHost(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("traces: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := newTracer(tp)
	if o.Endpoint != "" && get(EnvEndpoint) == "" && get(EnvTracesEndpoint) == "" {
		t.env = []string{EnvEndpoint + "=" + o.Endpoint}
		if protocol != "" {
			t.env = append(t.env, envProtocol+"="+protocol)
		}
	}
	return t, nil
}

// New is a tracer over tp, for tests that record spans in memory.
func New(tp *sdktrace.TracerProvider) *Tracer { return newTracer(tp) }

func newTracer(tp *sdktrace.TracerProvider) *Tracer {
	return &Tracer{tp: tp, tracer: tp.Tracer("ralph"), last: map[string]trace.SpanContext{}}
}

// checkEndpoint refuses an endpoint that is not an http(s) URL, so a typo
// is an error at start rather than traces silently lost.
func checkEndpoint(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http:// or https:// URL")
	}
	return nil
}

// Shutdown exports what is left,
// waiting at most timeout: an unreachable collector must not keep ralph
// from exiting.
func (t *Tracer) Shutdown(timeout time.Duration) error {
	if t == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return t.tp.Shutdown(ctx)
}

// Flush exports the spans that ended so far (tests, and a host before a
// long idle).
func (t *Tracer) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// remember keeps run as its task's last run.
func (t *Tracer) remember(task string, run trace.SpanContext) {
	if task == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.last[task]; !ok && len(t.last) >= maxTasks {
		clear(t.last)
	}
	t.last[task] = run
}

func (t *Tracer) lastRun(task string) (trace.SpanContext, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sc, ok := t.last[task]
	return sc, ok
}

// traceparent is the W3C traceparent of sc.
func traceparent(sc trace.SpanContext) string {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return carrier["traceparent"]
}
