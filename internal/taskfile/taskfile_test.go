package taskfile

import (
	"strings"
	"testing"
	"time"
)

const seed = `# Task: Implement user authentication

**Session:** 5
**Created:** 2026-01-22 17:30
**Status:** IN_PROGRESS

## Checklist

- [x] Create user model
- [ ] Add logout endpoint

## RALPH_STATUS

RALPH_STATUS:
STATUS: IN_PROGRESS
EXIT_SIGNAL: false
WORK_TYPE: feature
FILES_MODIFIED: 5
TASKS_REMAINING: 1
`

func TestParseTheSeedFormat(t *testing.T) {
	f, err := Parse("5-task.md", []byte(seed))
	if err != nil {
		t.Fatal(err)
	}
	if f.Title != "Implement user authentication" || f.Session != "5" || f.Status != "IN_PROGRESS" ||
		!f.Created.Equal(time.Date(2026, 1, 22, 17, 30, 0, 0, time.UTC)) {
		t.Errorf("header %+v", f)
	}
	c := f.Checklist.Counts()
	if c.Total != 2 || c.Done != 1 || f.Checklist.NextOpen().Text != "Add logout endpoint" {
		t.Errorf("checklist %+v", c)
	}
	if len(f.Block) != 5 || f.Block[0] != (Field{"STATUS", "IN_PROGRESS"}) || f.Block[3] != (Field{"FILES_MODIFIED", "5"}) {
		t.Errorf("block %+v", f.Block)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no title", "**Session:** 5\n- [ ] x\n", "t.md: no `# Task: TITLE` heading"},
		{"bad created", "# Task: x\n\n**Created:** yesterday\n", `t.md:3: **Created:** "yesterday" is not a time like 2006-01-02 15:04`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.md", []byte(tt.in))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// Checkboxes the agent echoes in its status section are not the checklist.
func TestStatusSectionIsNotTheChecklist(t *testing.T) {
	in := "# Task: x\n\n## Checklist\n\n- [x] a\n\n## RALPH_STATUS\n\n- [ ] echoed\nSTATUS: COMPLETE\n"
	f, err := Parse("t", []byte(in))
	if err != nil || f.Checklist.Counts().Total != 1 || !f.Checklist.Complete() {
		t.Fatalf("%+v %v", f.Checklist, err)
	}
}

func TestNewThenUpdate(t *testing.T) {
	at := time.Date(2026, 11, 25, 14, 5, 0, 0, time.UTC)
	data := New("Add a health\nendpoint\n# Task: injected", "api", at)
	f, err := Parse("t", data)
	if err != nil || f.Title != "Add a health endpoint # Task: injected" || f.Status != "QUEUED" || f.Session != "api" || f.Checklist.Counts().Total != 0 {
		t.Fatalf("new: %+v %v\n%s", f, err, data)
	}
	// The agent writes its checklist; ralph updates the status around it.
	agent := strings.Replace(string(data), "## RALPH_STATUS", "- [x] route\n- [ ] test\n\nNotes by the agent.\n\n## RALPH_STATUS", 1)
	out := Update([]byte(agent), "IN_PROGRESS", []Field{{"STATUS", "IN_PROGRESS"}, {"EXIT_SIGNAL", "false"}, {"FILES_MODIFIED", "2"}})
	f, err = Parse("t", out)
	if err != nil || f.Status != "IN_PROGRESS" || len(f.Block) != 3 || f.Checklist.Counts().Done != 1 {
		t.Fatalf("updated: %+v %v\n%s", f, err, out)
	}
	if !strings.Contains(string(out), "- [x] route\n- [ ] test\n\nNotes by the agent.\n") {
		t.Errorf("the agent's text changed:\n%s", out)
	}
	again := Update(out, "IN_PROGRESS", []Field{{"STATUS", "IN_PROGRESS"}, {"EXIT_SIGNAL", "false"}, {"FILES_MODIFIED", "2"}})
	if string(again) != string(out) {
		t.Errorf("Update is not idempotent:\n%s\n---\n%s", out, again)
	}
}

func TestUpdateKeepsWhatFollowsTheSection(t *testing.T) {
	in := "# Task: x\n**Status:** QUEUED\n\n## RALPH_STATUS\nSTATUS: IN_PROGRESS\n\n## Notes\nkeep me\n"
	out := string(Update([]byte(in), "DONE", []Field{{"STATUS", "COMPLETE"}, {"EXIT_SIGNAL", "true"}}))
	want := "# Task: x\n**Status:** DONE\n\n## RALPH_STATUS\n\nRALPH_STATUS:\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\n\n## Notes\nkeep me\n"
	if out != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
}

// A value cannot smuggle a line, a heading or a key into the file.
func TestUpdateValuesStayOnTheirLine(t *testing.T) {
	out := Update([]byte("# Task: x\n"), "DONE\n## Checklist\n- [ ] evil", []Field{{"STATUS", "OK\n- [x] forged"}, {"BAD KEY\n#", "v"}})
	f, err := Parse("t", out)
	if err != nil || f.Checklist.Counts().Total != 0 || len(f.Block) != 1 {
		t.Fatalf("%+v %v\n%s", f, err, out)
	}
}

func TestUpdateAddsMissingParts(t *testing.T) {
	out := string(Update([]byte("# Task: x\n\n- [ ] a\n"), "IN_PROGRESS", nil))
	want := "# Task: x\n\n**Status:** IN_PROGRESS\n\n- [ ] a\n\n## RALPH_STATUS\n\nRALPH_STATUS:\n"
	if out != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
}

func FuzzTaskFile(f *testing.F) {
	f.Add([]byte(seed), "DONE")
	f.Add([]byte("# Task: x\n**Status:**\n## RALPH_STATUS\n## RALPH_STATUS\n"), "X")
	f.Add([]byte("## RALPH_STATUS\r\n# Task: y\r\n- [ ] a"), "")
	f.Fuzz(func(t *testing.T, data []byte, status string) {
		before, err := Parse("f", data)
		block := []Field{{"STATUS", status}, {"EXIT_SIGNAL", "false"}}
		out := Update(data, status, block)
		again := Update(out, status, block)
		if string(again) != string(out) {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
		after, err2 := Parse("f", out)
		if err == nil && err2 != nil {
			t.Fatalf("a valid file became invalid: %v\n%q", err2, out)
		}
		if err == nil && (after.Title != before.Title || after.Status != oneLine(status)) {
			t.Fatalf("title %q→%q, status %q", before.Title, after.Title, after.Status)
		}
		if err == nil && after.Checklist.Counts() != before.Checklist.Counts() {
			t.Fatalf("the checklist changed: %+v → %+v\n%q\n%q", before.Checklist.Counts(), after.Checklist.Counts(), data, out)
		}
	})
}
