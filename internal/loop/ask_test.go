package loop

import "testing"

func TestAnswer(t *testing.T) {
	waiting := State{Loop: 3, Ask: Ask{Loop: 3, Questions: []string{"Which DB?"}}}
	answered := waiting
	answered.Ask.Answer = "SQLite"
	for _, tc := range []struct {
		name string
		st   State
		to   int
		text string
		ok   bool
	}{
		{"the answer to the question", waiting, 3, "Postgres", true},
		{"an answer to an earlier question", waiting, 2, "Postgres", false},
		{"an empty answer", waiting, 3, "", false},
		{"a question answered already", answered, 3, "Postgres", false},
		{"no question", State{Loop: 3}, 3, "Postgres", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Answer(tc.st, tc.to, tc.text, "cli")
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && (got.Ask.Answer != tc.text || got.Ask.By != "cli" || got.Ask.Waiting()) {
				t.Errorf("ask %+v", got.Ask)
			}
			if !ok && got.Ask.Answer != tc.st.Ask.Answer {
				t.Errorf("changed without applying: %+v", got.Ask)
			}
		})
	}
}

// A new run keeps the question where a person answers it (a restarted
// daemon waits for the same answer) and drops it where nobody does: ralph
// run asked, the person answered in the files and ran it again.
func TestBeginKeepsTheQuestionOnlyWhereAPersonAnswers(t *testing.T) {
	st := State{Loop: 3, Ask: Ask{Loop: 3, Questions: []string{"Which DB?"}}}
	p := policy()
	if got, _ := Begin(st, t0, p); got.Ask.Loop != 0 {
		t.Errorf("ralph run's next run: ask %+v, want none", got.Ask)
	}
	p.Answerable = true
	if got, _ := Begin(st, t0, p); !got.Ask.Waiting() || got.Ask.Questions[0] != "Which DB?" {
		t.Errorf("a restarted daemon's run: ask %+v, want the question", got.Ask)
	}
}
