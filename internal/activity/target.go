package activity

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxTargetLen is how much of a tool target a live line shows.
const MaxTargetLen = 80

// ShortTarget makes a tool target fit one live line: first line only,
// blanks collapsed, at most MaxTargetLen characters with an ellipsis.
func ShortTarget(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= MaxTargetLen {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:MaxTargetLen-1]), " ") + "…"
}

// RelPath shows a path inside the project relative to it; others stay as
// they are.
func RelPath(p, dir string) string {
	if dir == "" || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return p
	}
	return rel
}

// toolInput holds the fields that name what a tool call works on, under
// the names the agents use: Claude's file_path, Gemini's absolute_path and
// dir_path, OpenCode's filePath. They agree on command, pattern and path,
// so one reading serves them all.
type toolInput struct {
	FilePath     string            `json:"file_path"`
	FilePathAlt  string            `json:"filePath"`
	AbsolutePath string            `json:"absolute_path"`
	NotebookPath string            `json:"notebook_path"`
	Command      string            `json:"command"`
	Pattern      string            `json:"pattern"`
	Path         string            `json:"path"`
	DirPath      string            `json:"dir_path"`
	URL          string            `json:"url"`
	Query        string            `json:"query"`
	Description  string            `json:"description"`
	Skill        string            `json:"skill"`
	Todos        []json.RawMessage `json:"todos"`
}

// ToolTarget is the short "what" of a tool call, read from its JSON input:
// the file for file tools, the command for shells, the pattern for
// searches; file paths inside dir are shown relative to it.
func ToolTarget(input json.RawMessage, dir string) string {
	var in toolInput
	if len(input) == 0 || json.Unmarshal(input, &in) != nil {
		return ""
	}
	file := first(in.FilePath, in.FilePathAlt, in.AbsolutePath, in.NotebookPath)
	where := first(in.Path, in.DirPath)
	var t string
	switch {
	case file != "":
		t = RelPath(file, dir)
	case in.Command != "":
		t = in.Command
	case in.Pattern != "":
		t = in.Pattern
		if where != "" {
			t += " in " + RelPath(where, dir)
		}
	case in.URL != "":
		t = in.URL
	case in.Query != "":
		t = in.Query
	case in.Description != "":
		t = in.Description
	case in.Skill != "":
		t = in.Skill
	case where != "":
		t = RelPath(where, dir)
	case in.Todos != nil:
		t = fmt.Sprintf("%d todos", len(in.Todos))
	}
	return ShortTarget(t)
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
