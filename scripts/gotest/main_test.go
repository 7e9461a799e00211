package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSummaryCountsAndReasons(t *testing.T) {
	events := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: bwrap not installed\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: bwrap not installed\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Test":"TestD/sub","Output":"    d_test.go:5: boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestD/sub"}`,
		`{"Action":"output","Package":"p","Test":"TestD","Output":"--- FAIL: TestD (0.00s)\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestD"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`not json: a build error`,
	}, "\n")
	var out bytes.Buffer
	s := newSummary(&out)
	s.read(strings.NewReader(events))
	s.close()
	got := out.String()
	for _, want := range []string{
		"--- FAIL: TestD", "d_test.go:5: boom", "FAIL\tp\t0.1s\n", "not json: a build error\n",
		"\n1 passed, 1 failed, 2 skipped\n",
		"     2  bwrap not installed\n",
		"scripts/install-test-deps.sh",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}
