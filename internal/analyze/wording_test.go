package analyze

import (
	"strings"
	"testing"
)

func TestCompletionWording(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		{"The project is complete and ready for review.", true},
		{"All done.", true},
		{"Done.", true},
		{"Finished everything.", true},
		{"Nothing left to do.", true},
		{"There is nothing to do: the feature is already implemented.", true},
		{"All tasks are completed.", true},
		{"No tasks remaining.", true},
		{"Implementation complete; all tests green.", true},
		{"Investigation complete.", true},
		{"The work is finished", true},
		{"**Done**", true},
		// partials, negations, conditionals
		{"The migration is incomplete; three tasks remain.", false},
		{"This is not done yet.", false},
		{"Not complete: two tests fail.", false},
		{"I completed the first step of the refactor.", false},
		{"Completed the parser task.", false},
		{"Done with this step.", false},
		{"Task 2 done, more remain.", false},
		{"Phase 1 implementation complete. Phase 2 remains.", false},
		{"Once done, I will update the plan.", false},
		{"The build will be complete after the next iteration.", false},
		{"It is almost done.", false},
		{"Partially complete.", false},
		{"I still need to finish the API.", false},
		{"Working on the parser.", false},
		{"The completed tasks are listed in fix_plan.md", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := hasCompletionWording(tc.text); got != tc.want {
			t.Errorf("hasCompletionWording(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestQuestions(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"Should I implement approach A or B? Which option do you prefer?", 2},
		{"I should implement the conservative approach.", 0},
		{"Would you like me to add caching?", 1},
		{"Please confirm the database choice.", 1},
		{"Let me know which endpoint to keep.", 1},
		{"Why does it fail? The cache was stale.", 0},          // rhetorical, answered
		{"```\nif ok := x(); ok { // should I?\n```", 0},       // code
		{"> Do you want feature flags?\nI added them.", 0},     // quoted
		{"1. Should I use PostgreSQL?\n2. Which port?", 2},     // list
		{"What should the timeout be? Can you clarify?", 2},    // two
		{"Is the API stable? I checked: it is.", 0},            // self-answered, no cue
		{"I need your input on the schema before I go on.", 1}, // explicit request
		{"The question is whether the cache helps.", 0},        // mention
		{"Next: implement retries. Tests pass.", 0},            // statements
		{"Do you want me to proceed with the migration?", 1},   // cue "want me"
		{"Shall I delete the old files?", 1},                   // cue "shall i"
		{"What is 2+2? It is 4.", 0},                           // no cue
		{strings.Repeat("Should I keep going? ", 30), 20},      // bounded
		{"", 0},
	}
	for _, tc := range cases {
		if got := len(questionList(strings.Split(tc.text, "\n"))); got != tc.want {
			t.Errorf("questions(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestSentences(t *testing.T) {
	got := sentences("Edited main.go and v1.2 notes. Done! Next?\nLine two; clause")
	want := []string{"Edited main.go and v1.2 notes.", "Done!", "Next?", "Line two", "clause"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sentences = %q, want %q", got, want)
	}
}
