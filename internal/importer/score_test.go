package importer

import (
	"strings"
	"testing"
)

var completePRD = "# Task tracker CLI\n\n" +
	"## Overview\n\nA command line tool, `tt`, that keeps a list of tasks in ~/.tt/tasks.json and prints them. " +
	"It exists because the team keeps losing small follow-ups between stand-ups; the goal is a tool that is faster than a text file.\n\n" +
	"## Requirements\n\n" +
	"- [ ] `tt add TEXT` appends a task with an id and a created_at timestamp\n" +
	"- [ ] `tt list` prints open tasks, oldest first, in under 50ms for 10000 tasks\n" +
	"- [ ] `tt done ID` marks a task done; an unknown id exits with status 2\n" +
	"- [ ] `tt list --json` prints the tasks as a JSON array\n\n" +
	"## Technical design\n\nGo, one package per concern: internal/store for the file, internal/cli for commands. The TaskStore type owns reads and writes; writes are atomic (temp file and rename).\n\n" +
	"```go\ntype Task struct {\n\tID int\n\tText string\n\tDone bool\n}\n```\n\n" +
	"## Acceptance criteria\n\n- Adding then listing shows the task\n- Marking done hides it from `tt list`\n- A corrupt tasks.json is reported, never overwritten\n\n" +
	"## Out of scope\n\n- Sync between machines\n- Due dates and reminders\n\n" +
	strings.Repeat("The tool must stay small, start fast and never lose a task, even when the disk is full or the process is killed halfway through a write. ", 12)

func TestScoreText(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		min, max  int
		wantParts map[string]int
		wantGap   string
	}{
		{
			name: "complete PRD", text: completePRD, min: 90, max: 100,
			wantParts: map[string]int{"acceptance criteria": 25, "checklists": 15, "sections": 20, "code": 10, "concrete nouns": 10},
		},
		{
			name: "one-line idea", text: "Make the app faster.", min: 0, max: 5,
			wantParts: map[string]int{"acceptance criteria": 0, "checklists": 0, "sections": 0, "code": 0},
			wantGap:   "no acceptance criteria",
		},
		{
			name:      "acceptance heading without items",
			text:      "# X\n\n## Acceptance Criteria\n\nIt works.\n",
			wantParts: map[string]int{"acceptance criteria": 15},
			max:       100,
		},
		{
			name:      "Given/When/Then without a heading",
			text:      "Login\n\nGiven a user with a password\nWhen they log in\nThen they see the dashboard\n",
			wantParts: map[string]int{"acceptance criteria": 20},
			max:       100,
		},
		{
			name:      "plain-text headings with colons and bold lines",
			text:      "Requirements:\n- a\n- b\n\nOut of scope:\n- c\n\n**Background**\nWhy.\n\nDesign:\nSimple.\n",
			wantParts: map[string]int{"sections": 20, "checklists": 4},
			max:       100,
		},
		{
			name:      "out of scope is not scope",
			text:      "## Out of scope\n\nEverything.\n",
			wantParts: map[string]int{"sections": 5},
			max:       100,
			wantGap:   "no requirements, scope, technical section",
		},
		{
			name:      "headings inside code blocks do not count",
			text:      "```\n## Requirements\n## Acceptance criteria\n- [ ] a\n```\n",
			wantParts: map[string]int{"sections": 0, "acceptance criteria": 0, "checklists": 0, "code": 10},
			max:       100,
		},
		{
			name:      "few checkboxes, inline code",
			text:      "- [ ] run `make`\n- [x] edit `main.go`\n",
			wantParts: map[string]int{"checklists": 10, "code": 5},
			max:       100,
		},
		{
			name:      "length: one point per 30 words",
			text:      strings.Repeat("word ", 300),
			wantParts: map[string]int{"length": 10},
			max:       100,
		},
		{
			name:      "concrete nouns: two points each, at most ten",
			text:      "Touch internal/store/file.go, call GET /api/tasks with --verbose, rename user_id to UserID, keep p99 under 200ms.",
			wantParts: map[string]int{"concrete nouns": 10},
			max:       100,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ScoreText(tt.text)
			sum := 0
			for _, p := range s.Parts {
				sum += p.Points
				if p.Points < 0 || p.Points > p.Max {
					t.Errorf("part %s: %d/%d out of range", p.Name, p.Points, p.Max)
				}
				if want, ok := tt.wantParts[p.Name]; ok && p.Points != want {
					t.Errorf("part %s = %d, want %d (%s)", p.Name, p.Points, want, p.Note)
				}
			}
			if sum != s.Total || s.Total < tt.min || s.Total > tt.max {
				t.Errorf("total %d (sum %d), want %d..%d: %s", s.Total, sum, tt.min, tt.max, s)
			}
			if tt.wantGap != "" && !strings.Contains(strings.Join(s.Gaps(), "; "), tt.wantGap) {
				t.Errorf("gaps %q lack %q", s.Gaps(), tt.wantGap)
			}
		})
	}
}

func TestScoreMaxIs100(t *testing.T) {
	max := 0
	for _, p := range ScoreText("").Parts {
		max += p.Max
	}
	if max != 100 {
		t.Errorf("the parts' maxima add up to %d", max)
	}
}

func TestScoreJSONDocument(t *testing.T) {
	doc, err := ParseDocument("prd.json", []byte(`{"title":"Tasks","overview":"A tool.","requirements":["add a task","list tasks","mark done"],
		"acceptance_criteria":["adding then listing shows it","done hides it"],"out_of_scope":["sync"],"design":{"storage":"tasks.json"}}`))
	if err != nil {
		t.Fatal(err)
	}
	s := ScoreDocument(doc)
	got := map[string]int{}
	for _, p := range s.Parts {
		got[p.Name] = p.Points
	}
	if got["acceptance criteria"] != 25 || got["sections"] != 20 || got["checklists"] != 8 {
		t.Errorf("JSON score %s", s)
	}
	if again := ScoreDocument(doc); again.String() != s.String() {
		t.Errorf("not deterministic: %s vs %s", s, again)
	}
}
