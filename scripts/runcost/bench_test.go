package main

import (
	"os"
	"path/filepath"
	"testing"

	"ralph/internal/servetest"
)

// The benchmarks guard the figures runcost prints (docs/development.md,
// "The loop's own cost"): one `ralph run` of b.N instant calls of the
// scripted fake agent, built from this tree, as a whole process.
//
//	go test ./scripts/runcost -run XXX -bench RunCall -benchtime 60x -count 7
//
// own-ms/call is ralph's own CPU per call (goal: at most 4 ms on the
// reference machine), loop-ms/call the process tree's less the agent's.
func BenchmarkRunCall(b *testing.B) {
	r, bin := benchRig(b)
	agentCPU, err := r.agentAlone(10)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	s, err := r.ralph(bin, agentCPU, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ms(s.own), "own-ms/call")
	report(b, s)
}

// BenchmarkBashToolCall is the same for the bash tool ralph replaces, named
// by $RALPH_BENCH_BASH_TOOL (its ralph_loop.sh, lib/ beside it); its pauses
// between calls are cut short. The goal is a loop-ms/call at least 400
// times BenchmarkRunCall's, measured in turn on the same machine.
//
//	RALPH_BENCH_BASH_TOOL=…/ralph_loop.sh go test ./scripts/runcost -run XXX -bench BashToolCall -benchtime 6x
func BenchmarkBashToolCall(b *testing.B) {
	tool := os.Getenv("RALPH_BENCH_BASH_TOOL")
	if tool == "" {
		b.Skip("set RALPH_BENCH_BASH_TOOL to the bash tool's ralph_loop.sh")
	}
	r, _ := benchRig(b)
	agentCPU, err := r.agentAlone(10)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	s, err := r.bash(tool, agentCPU, max(b.N, 2))
	if err != nil {
		b.Fatal(err)
	}
	report(b, s)
}

func benchRig(b *testing.B) (*rig, string) {
	work := b.TempDir()
	r, err := newRig(work)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(work, "ralph")
	if err := servetest.BuildRalph(bin, false); err != nil {
		b.Fatal(err)
	}
	return r, bin
}

func report(b *testing.B, s sample) {
	b.ReportMetric(ms(s.loop), "loop-ms/call")
	b.ReportMetric(0, "ns/op")
}
