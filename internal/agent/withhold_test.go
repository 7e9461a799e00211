package agent

import (
	"slices"
	"strings"
	"testing"
)

// A withheld variable of ralph's environment reaches no agent; the others
// do, and an invocation may still set one explicitly.
func TestWithholdKeepsCredentialsFromAgents(t *testing.T) {
	t.Setenv("RALPH_TEST_BOT_TOKEN", "123:secret")
	t.Setenv("RALPH_TEST_PLAIN", "visible")
	names := func(env []string) []string {
		var out []string
		for _, kv := range env {
			n, _, _ := strings.Cut(kv, "=")
			out = append(out, n)
		}
		return out
	}
	env, tmp, err := environ(nil)
	if err != nil {
		t.Fatal(err)
	}
	tmp.done()
	if !slices.Contains(names(env), "RALPH_TEST_BOT_TOKEN") {
		t.Fatal("the variable is missing before it is withheld: the test proves nothing")
	}
	Withhold("RALPH_TEST_BOT_TOKEN")
	env, tmp, err = environ([]string{"TMPDIR=" + t.TempDir()})
	if err != nil || tmp != nil {
		t.Fatal(err, tmp)
	}
	if n := names(env); slices.Contains(n, "RALPH_TEST_BOT_TOKEN") || !slices.Contains(n, "RALPH_TEST_PLAIN") {
		t.Errorf("environment names %v", n)
	}
	env, _, _ = environ([]string{"TMPDIR=" + t.TempDir(), "RALPH_TEST_BOT_TOKEN=given"})
	if !slices.Contains(env, "RALPH_TEST_BOT_TOKEN=given") {
		t.Error("an explicit entry was dropped")
	}
}
