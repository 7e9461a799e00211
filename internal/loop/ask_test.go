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
