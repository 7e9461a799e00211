package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agenttest"
	"ralph/internal/fakeapi"
	"ralph/internal/tracing/jaegertest"
)

// Claude Code's own traces join ralph's: with its telemetry and session
// tracing on (CLAUDE_CODE_ENABLE_TELEMETRY, CLAUDE_CODE_ENHANCED_TELEMETRY_BETA,
// OTEL_TRACES_EXPORTER=otlp) it reads the TRACEPARENT ralph hands it in
// print mode, so its spans hang under ralph's agent call, in the same
// trace, in a real Jaeger.
func TestClaudeTracesJoinRalphs(t *testing.T) {
	j := jaegertest.Start(t)
	dir := newProject(t)
	srv := fakeapi.Start(t, fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			fakeapi.ToolTurn("Creating hello.txt.", "Write", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
			fakeapi.TextTurn("Created hello.txt." + statusBlock("COMPLETE", true)),
		}},
	}})
	env := append(agenttest.ClaudeEnv(t, srv.URL), "OTEL_EXPORTER_OTLP_ENDPOINT="+j.OTLP, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=200", "CLAUDE_CODE_ENABLE_TELEMETRY=1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1",
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none")
	r := runRalph(t, dir, env, "--max-loops", "1")
	if r.exit != 0 && r.exit != 5 {
		t.Fatalf("exit %d", r.exit)
	}
	trs := j.WaitTraces("ralph", nil, 60*time.Second, func(trs []jaegertest.Trace) bool {
		for _, tr := range trs {
			for _, s := range tr.Spans {
				if s.Service != "ralph" {
					return true
				}
			}
		}
		return false
	})
	var call jaegertest.Span
	for _, s := range trs[0].Spans {
		if strings.HasPrefix(s.Name, "invoke_agent") {
			call = s
		}
	}
	var under []string
	for _, s := range trs[0].Spans {
		if s.Service != "ralph" && s.ParentID == call.SpanID {
			under = append(under, s.Service+": "+s.Name)
		}
	}
	if call.SpanID == "" || len(under) == 0 {
		t.Fatalf("no span of Claude Code under ralph's agent call:\n%s", jaegertest.Dump(trs))
	}
	// Its model requests are in the same trace, deeper down.
	requests := 0
	for _, s := range trs[0].Spans {
		if s.Name == "claude_code.llm_request" {
			requests++
		}
	}
	if requests == 0 {
		t.Errorf("no model request of Claude Code in ralph's trace:\n%s", jaegertest.Dump(trs))
	}
	t.Logf("Claude Code's spans under ralph's agent call: %v; its model requests: %d", under, requests)
}
