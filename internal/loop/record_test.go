package loop

import (
	"testing"

	"ralph/internal/analyze"
)

func TestRecordKeepsTheTypedReading(t *testing.T) {
	it := Iteration{Loop: 2, Observed: Observed{Status: "IN_PROGRESS", PRReady: true, TestsStatus: analyze.TestsFailing,
		StatusBlock: map[string]string{"PR_READY": "yes", "TESTS_STATUS": "FAIL (2 of 40)"}}}
	if m := Record(it, Decision{}, State{}); !m.PRReady || m.TestsStatus != analyze.TestsFailing {
		t.Errorf("record %+v", m)
	}
	if m := Record(Iteration{Observed: Observe(nil)}, Decision{}, State{}); m.TestsStatus != analyze.TestsUnknown {
		t.Errorf("nothing read: tests %q, want %s (so the record is not taken for an old one)", m.TestsStatus, analyze.TestsUnknown)
	}
}

func TestMetricsTyped(t *testing.T) {
	block := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		m     Metrics
		ready bool
		tests string
	}{
		{"an old record: PR_READY true", Metrics{StatusBlock: block("PR_READY", "true")}, true, analyze.TestsUnknown},
		{"an old record: PR_READY yes, as the analyzer reads it", Metrics{StatusBlock: block("PR_READY", " Yes ")}, true, analyze.TestsUnknown},
		{"an old record: not ready", Metrics{StatusBlock: block("PR_READY", "false", "TESTS_STATUS", "PASSING")}, false, analyze.TestsPassing},
		{"an old record: failing in words", Metrics{StatusBlock: block("TESTS_STATUS", "Fail (2 of 40)")}, false, analyze.TestsFailing},
		{"an old record without a block", Metrics{}, false, analyze.TestsUnknown},
		{"a new record is read as kept, not from its block", Metrics{TestsStatus: analyze.TestsPassing,
			StatusBlock: block("PR_READY", "true", "TESTS_STATUS", "FAILING")}, false, analyze.TestsPassing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.m.Typed()
			if got.PRReady != tt.ready || got.TestsStatus != tt.tests {
				t.Errorf("Typed: pr ready %v, tests %q; want %v, %q", got.PRReady, got.TestsStatus, tt.ready, tt.tests)
			}
		})
	}
}
