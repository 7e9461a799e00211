// Package jaegertest runs Jaeger's all-in-one (v2) for tests: a real trace
// backend that receives OTLP over HTTP, keeps the traces in memory and
// answers queries over its HTTP API, on free ports. It is built by
// scripts/install-jaeger.sh.
package jaegertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"ralph/internal/bintest"
	"ralph/internal/syncbuf"
)

// Version is the Jaeger the tests run (scripts/install-jaeger.sh).
const Version = "v1.76.0"

// Binary finds Jaeger: $RALPH_JAEGER, else the script's cache.
func Binary() (string, error) {
	return bintest.Cached("RALPH_JAEGER", "jaeger-"+Version, "jaeger", "scripts/install-jaeger.sh")
}

// Server is one Jaeger.
type Server struct {
	// OTLP is the base URL of its OTLP/HTTP receiver, what
	// OTEL_EXPORTER_OTLP_ENDPOINT takes.
	OTLP string
	// Query is the base URL of its query API (and UI).
	Query string
	t     testing.TB
}

// config is the all-in-one's configuration with only what the tests use:
// OTLP/HTTP in, memory storage, the query API; its own telemetry off so
// that nothing listens on a fixed port.
const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    # Its own traces would go to a collector on the default port.
    enable_tracing: false
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// Start runs Jaeger on free ports until the test ends. Without it the
// test is skipped, except on CI (CI=true), where it fails.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	bintest.Need(t, err)
	query, grpc, otlp := bintest.FreePort(t), bintest.FreePort(t), bintest.FreePort(t)
	conf := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, config, query, grpc, otlp), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &syncbuf.Buffer{}
	cmd := exec.Command(bin, "--config", conf)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("jaeger log:\n%s", log.String())
		}
	})
	s := &Server{OTLP: "http://127.0.0.1:" + strconv.Itoa(otlp), Query: "http://127.0.0.1:" + strconv.Itoa(query), t: t}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(s.Query + "/api/services")
		if err == nil {
			resp.Body.Close()
			// The receiver answers too (a GET is refused, but answered).
			if r, err := http.Get(s.OTLP + "/v1/traces"); err == nil {
				r.Body.Close()
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not answer on %s:\n%s", s.Query, log.String())
		}
	}
}

// Span is a span as the query API returns it.
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Service                   string
	Start                     time.Time
	Duration                  time.Duration
	Tags                      map[string]any
	// Links are the span context ids (trace:span) it follows from.
	Links []string
}

// Tag is the span's tag as a string ("" when absent).
func (s Span) Tag(k string) string {
	v, ok := s.Tags[k]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// Trace is one trace's spans.
type Trace struct {
	ID    string
	Spans []Span
}

// Traces asks the query API for service's traces (tags filter them: the
// spans' attributes).
func (s *Server) Traces(service string, tags map[string]string) ([]Trace, error) {
	q := url.Values{"service": {service}, "limit": {"100"}, "lookback": {"1h"}}
	if len(tags) > 0 {
		b, _ := json.Marshal(tags)
		q.Set("tags", string(b))
	}
	resp, err := http.Get(s.Query + "/api/traces?" + q.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaeger query: %s", resp.Status)
	}
	var body struct {
		Data []struct {
			TraceID string `json:"traceID"`
			Spans   []struct {
				TraceID       string `json:"traceID"`
				SpanID        string `json:"spanID"`
				OperationName string `json:"operationName"`
				References    []struct {
					RefType string `json:"refType"`
					TraceID string `json:"traceID"`
					SpanID  string `json:"spanID"`
				} `json:"references"`
				StartTime int64 `json:"startTime"` // µs
				Duration  int64 `json:"duration"`  // µs
				Tags      []struct {
					Key   string `json:"key"`
					Value any    `json:"value"`
				} `json:"tags"`
				ProcessID string `json:"processID"`
			} `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("jaeger query: %w", err)
	}
	var out []Trace
	for _, d := range body.Data {
		tr := Trace{ID: d.TraceID}
		for _, sp := range d.Spans {
			x := Span{TraceID: sp.TraceID, SpanID: sp.SpanID, Name: sp.OperationName, Service: d.Processes[sp.ProcessID].ServiceName,
				Start: time.UnixMicro(sp.StartTime), Duration: time.Duration(sp.Duration) * time.Microsecond, Tags: map[string]any{}}
			for _, r := range sp.References {
				switch {
				case r.RefType == "CHILD_OF" && x.ParentID == "" && r.TraceID == sp.TraceID:
					x.ParentID = r.SpanID
				default:
					x.Links = append(x.Links, r.TraceID+":"+r.SpanID)
				}
			}
			for _, tg := range sp.Tags {
				x.Tags[tg.Key] = tg.Value
			}
			tr.Spans = append(tr.Spans, x)
		}
		out = append(out, tr)
	}
	return out, nil
}

// WaitTraces polls until ok accepts service's traces (exports are
// batched), failing the test after timeout with what it last saw.
func (s *Server) WaitTraces(service string, tags map[string]string, timeout time.Duration, ok func([]Trace) bool) []Trace {
	s.t.Helper()
	var last []Trace
	var err error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if last, err = s.Traces(service, tags); err == nil && ok(last) {
			return last
		}
	}
	s.t.Fatalf("jaeger never had the traces wanted (last error %v); it had:\n%s", err, Dump(last))
	return nil
}

// Dump shows traces for a failure message.
func Dump(trs []Trace) string {
	var b []byte
	for _, tr := range trs {
		b = fmt.Appendf(b, "trace %s\n", tr.ID)
		for _, sp := range tr.Spans {
			b = fmt.Appendf(b, "  %s %q parent=%s %v\n", sp.SpanID, sp.Name, sp.ParentID, sp.Tags)
		}
	}
	return string(b)
}
