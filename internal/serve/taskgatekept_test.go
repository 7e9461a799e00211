package serve

import (
	"strings"
	"testing"

	"ralph/internal/loop"
)

// The decisions made after a restart reach the next call as an answer in
// its prompt; an answer already waiting for that call stays first.
func TestWithKeptAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		st       loop.State
		wantLoop int
		want     string
	}{
		{"nothing waiting", loop.State{Loop: 4}, 5, "Bash(x): allowed"},
		{"an answer for the call", loop.State{Loop: 4, Ask: loop.Ask{Loop: 4, Questions: []string{"Which?"}, Answer: "red", By: "cli"}}, 4, "red\nBash(x): allowed"},
		{"a question nobody answered is not an answer", loop.State{Loop: 4, Ask: loop.Ask{Loop: 3, Questions: []string{"Which?"}}}, 5, "Bash(x): allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withKeptAnswer(tc.st, []string{"May I run Bash(x)?"}, "Bash(x): allowed")
			if got.Ask.Loop != tc.wantLoop || got.Ask.Answer != tc.want || got.Ask.Waiting() {
				t.Errorf("ask %+v", got.Ask)
			}
			if q := strings.Join(got.Ask.Questions, "|"); !strings.HasSuffix(q, "May I run Bash(x)?") {
				t.Errorf("questions %q", q)
			}
			if s := loop.AnswerSection(got.Ask); !strings.Contains(s, "A: "+tc.want) {
				t.Errorf("the prompt's section:\n%s", s)
			}
		})
	}
}
