package requests

import (
	"strings"
	"testing"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// Which things seen on ralph's pull request become a follow-up round's
// input.
func TestIsInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		x     sighting
		write bool
		want  bool
	}{
		{"a writer's review comment", sighting{Kind: kindReviewComment, Author: "alice", Body: "Rename it."}, true, true},
		{"a stranger's review comment", sighting{Kind: kindReviewComment, Author: "mallory", Body: "Rename it."}, false, false},
		{"ralph's own reply, by login", sighting{Kind: kindReviewComment, Author: "Ralph-Bot", Body: "Addressed."}, true, false},
		{"ralph's own comment, by marker", sighting{Kind: kindPRComment, Author: "alice", Body: "x <!-- ralph:round:k:1 -->"}, true, false},
		{"a writer's conversation comment", sighting{Kind: kindPRComment, Author: "alice", Body: "Also the docs."}, true, true},
		{"a stranger's conversation comment", sighting{Kind: kindPRComment, Author: "mallory", Body: "Also the docs."}, false, false},
		{"an empty comment", sighting{Kind: kindPRComment, Author: "alice", Body: "  "}, true, false},
		{"changes requested", sighting{Kind: kindReview, Author: "alice", State: "CHANGES_REQUESTED"}, true, true},
		{"changes requested by a stranger", sighting{Kind: kindReview, Author: "mallory", State: "CHANGES_REQUESTED"}, false, false},
		{"an approval", sighting{Kind: kindReview, Author: "alice", State: "APPROVED", Body: "LGTM"}, true, false},
		{"a commented review (its comments count)", sighting{Kind: kindReview, Author: "alice", State: "COMMENTED", Body: "see inline"}, true, false},
		{"a failed check", sighting{Kind: kindCheck, State: "failure"}, false, true},
		{"a timed-out check", sighting{Kind: kindCheck, State: "timed_out"}, false, true},
		{"an erroring status", sighting{Kind: kindCheck, State: "error"}, false, true},
		{"a passing check", sighting{Kind: kindCheck, State: "success"}, false, false},
		{"a cancelled check", sighting{Kind: kindCheck, State: "cancelled"}, false, false},
		{"a pending status", sighting{Kind: kindCheck, State: "pending"}, false, false},
		{"a conflict", sighting{Kind: kindConflict}, false, true},
		{"an unknown kind", sighting{Kind: "reaction", Author: "alice", Body: "+1"}, true, false},
	} {
		if got := isInput(c.x, "ralph-bot", c.write); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The threads a round replies to as addressed: those the status block
// names, or all of the round's when it names none; never another round's.
func TestThreadsAddressed(t *testing.T) {
	entries := []Entry{
		{ID: "rc:1", Kind: kindReviewComment, Thread: 1, Round: 1},
		{ID: "rc:2", Kind: kindReviewComment, Thread: 2, Round: 2},
		{ID: "rc:3", Kind: kindReviewComment, Thread: 3, Round: 2},
		{ID: "rc:4", Kind: kindReviewComment, Thread: 2, Round: 2}, // a reply in thread 2
		{ID: "pc:5", Kind: kindPRComment, Round: 2},
	}
	for _, c := range []struct {
		name  string
		block map[string]string
		want  map[int64]bool
	}{
		{"named", map[string]string{"REVIEW_THREADS_ADDRESSED": "[thread 3]"}, map[int64]bool{2: false, 3: true}},
		{"several", map[string]string{"REVIEW_THREADS_ADDRESSED": "2, 3"}, map[int64]bool{2: true, 3: true}},
		{"none said", map[string]string{"REVIEW_THREADS_ADDRESSED": "none"}, map[int64]bool{2: false, 3: false}},
		{"not given", map[string]string{"STATUS": "COMPLETE"}, map[int64]bool{2: true, 3: true}},
		{"another round's thread", map[string]string{"REVIEW_THREADS_ADDRESSED": "1"}, map[int64]bool{2: false, 3: false}},
	} {
		got := threadsAddressed(c.block, entries, 2)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// A check or conflict about an older head is stale; what people wrote
// never is.
func TestCurrentEntry(t *testing.T) {
	for _, c := range []struct {
		e    Entry
		head string
		want bool
	}{
		{Entry{ID: "check:abc:unit", Kind: kindCheck}, "abc", true},
		{Entry{ID: "check:abc:unit", Kind: kindCheck}, "def", false},
		{Entry{ID: "conflict:abc:base", Kind: kindConflict}, "abc", true},
		{Entry{ID: "conflict:abc:base", Kind: kindConflict}, "", false},
		{Entry{ID: "rc:1", Kind: kindReviewComment}, "def", true},
		{Entry{ID: "7", Kind: ""}, "def", true},
	} {
		if got := current(c.e, c.head); got != c.want {
			t.Errorf("%+v at %q: %v, want %v", c.e, c.head, got, c.want)
		}
	}
}

// A task that waits for review decides nothing: neither a halt nor a
// second pull request.
func TestDecideWaitingForReview(t *testing.T) {
	v := serve.TaskView{State: fleet.Waiting, Message: WaitingForReview, History: []serve.HistoryItem{{PRReady: false}}}
	if d := Decide(v); d.Outcome != Review {
		t.Errorf("outcome %s, want review", d.Outcome)
	}
	v.Message = ""
	if d := Decide(v); d.Outcome != Halt {
		t.Errorf("a plain waiting task: %s, want halt", d.Outcome)
	}
}

func TestFollowupRoundsSetting(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := map[string]string{"GITHUB_TOKEN": "t", "RALPH_GITHUB_REPOS": "acme/app"}
	if cfg, _, err := FromEnv(env(base)); err != nil || cfg.FollowupRounds != 5 {
		t.Fatalf("default: %d, %v", cfg.FollowupRounds, err)
	}
	for v, want := range map[string]int{"0": 0, "12": 12} {
		base["RALPH_PR_FOLLOWUP_ROUNDS"] = v
		if cfg, _, err := FromEnv(env(base)); err != nil || cfg.FollowupRounds != want {
			t.Errorf("%s: %d, %v", v, cfg.FollowupRounds, err)
		}
	}
	for _, v := range []string{"many", "-1", "3x"} {
		base["RALPH_PR_FOLLOWUP_ROUNDS"] = v
		if _, _, err := FromEnv(env(base)); err == nil || !strings.Contains(err.Error(), "RALPH_PR_FOLLOWUP_ROUNDS") {
			t.Errorf("%s: want an error naming the setting, got %v", v, err)
		}
	}
}
