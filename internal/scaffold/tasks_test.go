package scaffold

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

const samplePRD = `# Acme Todo: product requirements

## Overview
- A todo app for small teams
- Built on the existing API

## Must have

### Accounts
- Sign up with email
- Log in
  - Remember me for 30 days
- [x] Password hashing

### Lists
1. Create a list
2) Rename a list

## Should have
- Share a list (P1 per sales)

## Sharing (P2)

### Invite links

## Nice to have
- Dark mode

## Non-goals
- Mobile apps

## Open questions
- Which SSO providers?

` + "```" + `
- not a task, inside code
` + "```" + `

## Reporting
* Weekly summary email
`

func TestParsePRD(t *testing.T) {
	got := ParsePRD([]byte(samplePRD))
	want := []Task{
		{Text: "Sign up with email", Priority: High, Group: "Accounts"},
		{Text: "Log in", Priority: High, Group: "Accounts"},
		{Text: "Remember me for 30 days", Priority: High, Group: "Accounts", Depth: 1},
		{Text: "Password hashing", Done: true, Priority: High, Group: "Accounts"},
		{Text: "Create a list", Priority: High, Group: "Lists"},
		{Text: "Rename a list", Priority: High, Group: "Lists"},
		{Text: "Share a list (P1 per sales)", Priority: Medium},
		// A heading with no items becomes a task of its own.
		{Text: "Invite links", Priority: Low, Group: "Sharing (P2)"},
		{Text: "Dark mode", Priority: Optional},
		{Text: "Weekly summary email", Priority: High, Group: "Reporting"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d tasks, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("task %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestParsePRDPlainText(t *testing.T) {
	got := ParsePRD([]byte("Build a CLI that:\n\n• parses CSV files\n• prints totals\nThanks.\n"))
	if len(got) != 2 || got[0].Text != "parses CSV files" || got[1].Priority != High {
		t.Fatalf("got %+v", got)
	}
	if got := ParsePRD([]byte("Just a paragraph.\nAnother line.\n")); len(got) != 0 {
		t.Fatalf("prose became tasks: %+v", got)
	}
}

func TestParseChecklist(t *testing.T) {
	src := `# TODO

## High Priority
- [ ] Fix the login bug
- [x] Write the README

## Phase 2
- [ ] Add caching
  - [ ] Pick a cache library
- not a checkbox

## Future
- [ ] Plugins
`
	got := ParseChecklist([]byte(src))
	want := []Task{
		{Text: "Fix the login bug", Priority: High},
		{Text: "Write the README", Done: true, Priority: High},
		{Text: "Add caching", Priority: High, Group: "Phase 2"},
		{Text: "Pick a cache library", Priority: High, Group: "Phase 2", Depth: 1},
		{Text: "Plugins", Priority: Optional},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("task %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestFileSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prd.md")
	if err := os.WriteFile(path, []byte("- one\n- two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks, err := FileSource{Path: path}.Tasks(context.Background())
	if err != nil || len(tasks) != 2 {
		t.Fatalf("%v %v", tasks, err)
	}
	_, err = FileSource{Path: filepath.Join(dir, "missing.md")}.Tasks(context.Background())
	if KindOf(err) != KindNotFound {
		t.Fatalf("missing file: %v (kind %d)", err, KindOf(err))
	}
	_, err = FileSource{Path: dir, Format: FormatChecklist}.Tasks(context.Background())
	if err == nil {
		t.Fatal("a directory was read as a file")
	}
}

func TestRewriteReferences(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Update @fix_plan.md and read @AGENT.md.", "Update .ralph/fix_plan.md and read .ralph/AGENT.md."},
		{"See specs/ and fix_plan.md", "See .ralph/specs/ and .ralph/fix_plan.md"},
		{"Already .ralph/fix_plan.md and docs/specs/x", "Already .ralph/fix_plan.md and docs/specs/x"},
		{"my_fix_plan.md stays", "my_fix_plan.md stays"},
	}
	for _, tt := range tests {
		got, changed := RewriteReferences(tt.in)
		if got != tt.want || changed != (tt.in != tt.want) {
			t.Errorf("RewriteReferences(%q) = %q, %v; want %q", tt.in, got, changed, tt.want)
		}
	}
}
