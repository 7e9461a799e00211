package importer

import (
	"strings"
	"testing"
	"time"

	"ralph/internal/github"
)

func TestParseDocument(t *testing.T) {
	tests := []struct {
		name, file, data string
		wantFormat       string
		wantText         string // substring
		wantErr          string
	}{
		{name: "markdown", file: "prd.md", data: "# PRD\r\n\r\nText\r\n", wantFormat: FormatMarkdown, wantText: "# PRD\n\nText\n"},
		{name: "markdown long extension", file: "PRD.MARKDOWN", data: "# PRD", wantFormat: FormatMarkdown},
		{name: "text", file: "notes.txt", data: "Build a thing.", wantFormat: FormatText, wantText: "Build a thing."},
		{name: "no extension", file: "SPEC", data: "Build a thing.", wantFormat: FormatText},
		{name: "json pretty-printed", file: "prd.json", data: `{"title":"X","items":[1,2]}`, wantFormat: FormatJSON, wantText: "{\n  \"title\": \"X\",\n  \"items\": [\n    1,\n    2\n  ]\n}\n"},
		{name: "json content under another name", file: "prd.txt", data: ` {"title":"X"}`, wantFormat: FormatJSON, wantText: "\"title\": \"X\""},
		{name: "brace text that is not JSON stays text", file: "prd.txt", data: "{not json} but prose", wantFormat: FormatText},
		{name: "invalid .json", file: "prd.json", data: `{"title":`, wantErr: "prd.json: invalid JSON"},
		{name: "empty", file: "prd.md", data: " \n\t\n", wantErr: "prd.md is empty"},
		{name: "binary", file: "prd.md", data: "PK\x03\x04\x00\x00", wantErr: "not a text file"},
		{name: "too large", file: "prd.md", data: strings.Repeat("a", maxDocument+1), wantErr: "at most 96 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocument(tt.file, []byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || d.Format != tt.wantFormat || !strings.Contains(d.Text, tt.wantText) || d.Source != tt.file {
				t.Fatalf("got %+v, %v", d, err)
			}
		})
	}
}

func TestIssueDocument(t *testing.T) {
	created := time.Date(2026, 2, 3, 10, 0, 0, 0, time.UTC)
	is := github.Issue{
		Repo: github.Repo{Owner: "octo", Name: "hello"}, Number: 12, Title: "Add   login\nflow", URL: "https://github.com/octo/hello/issues/12",
		State: "open", Labels: []string{"feature", "P1"}, Milestone: "v1.0", Assignees: []string{"dev1", "dev2"}, Author: "reporter",
		CreatedAt: created, Comments: 3,
		Body: "<!-- Please describe the problem -->\r\nUsers need to log in.\r\n\r\n## Acceptance criteria\r\n- [ ] login works",
	}
	comments := []github.Comment{
		{Author: "dev1", Body: "Use OAuth with `state`.", CreatedAt: created.Add(24 * time.Hour)},
		{Author: "bot", Body: "<!-- only a template -->"},
		{Body: "No author."},
	}
	d := IssueDocument(is, comments)
	for _, want := range []string{
		"# Add login flow\n",
		"> Imported from GitHub issue [octo/hello#12](https://github.com/octo/hello/issues/12)",
		"> State: open", "> Labels: feature, P1", "> Milestone: v1.0", "> Assignees: dev1, dev2", "> Opened: 2026-02-03 by reporter",
		"## Description\n\nUsers need to log in.\n\n## Acceptance criteria\n- [ ] login works\n",
		"## Comments\n", "### Comment by dev1 on 2026-02-04\n\nUse OAuth with `state`.\n", "### Comment by someone\n\nNo author.",
	} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("missing %q in:\n%s", want, d.Text)
		}
	}
	for _, unwanted := range []string{"Please describe", "only a template", "Comment by bot", "\r"} {
		if strings.Contains(d.Text, unwanted) {
			t.Errorf("unexpected %q in:\n%s", unwanted, d.Text)
		}
	}
	if d.Source != "GitHub issue octo/hello#12" || d.Format != FormatMarkdown {
		t.Errorf("doc %+v", d)
	}
	// The score reads the issue's words, not the metadata ralph added: the
	// link and labels are not "concrete nouns".
	for _, p := range ScoreDocument(d).Parts {
		if p.Name == "concrete nouns" && p.Points > 0 {
			t.Errorf("metadata scored: %+v", p)
		}
	}

	empty := IssueDocument(github.Issue{Repo: is.Repo, Number: 1, Title: "Just a title"}, nil)
	if !strings.Contains(empty.Text, "no description") || strings.Contains(empty.Text, "## Comments") {
		t.Errorf("empty issue:\n%s", empty.Text)
	}
	if s := ScoreDocument(empty); s.Total > 5 {
		t.Errorf("a bare title scores %s", s)
	}
}
