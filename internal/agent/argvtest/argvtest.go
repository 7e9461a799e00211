// Package argvtest checks the command lines the agent adapters build from
// an invocation, the same way for every adapter: each adapter's test is a
// table of invocations and the argv each must give.
package argvtest

import (
	"slices"
	"testing"

	"ralph/internal/agent"
)

// Commander is an adapter as far as its command line goes.
type Commander interface {
	Command(inv agent.Invocation) ([]string, error)
}

// With is base changed by f: a table's invocations differ from one base
// in a field or two.
func With(base agent.Invocation, f func(*agent.Invocation)) agent.Invocation {
	f(&base)
	return base
}

// Check fails the test unless a, made with error err, builds want for
// inv; it returns the argv a built, for checks of the adapter's own.
func Check(t *testing.T, a Commander, err error, inv agent.Invocation, want []string) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Command(inv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("argv\n got %q\nwant %q", got, want)
	}
	return got
}
