package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxReadLines bounds what Read returns, as Claude Code's Read does: a
// whole large file would crowd out the conversation.
const maxReadLines = 2000

// toolDefs are the tools the built-in agent offers the model, with the
// input schemas of Claude Code's tools of the same names, so a script
// written for one agent works with the other.
var toolDefs = []toolDef{
	{Name: "Read", Description: "Read a file of the working directory.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"number"},"limit":{"type":"number"}},"required":["file_path"]}`)},
	{Name: "Write", Description: "Write a file of the working directory, replacing it if it exists.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}`)},
	{Name: "Edit", Description: "Replace text in a file of the working directory.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["file_path","old_string","new_string"]}`)},
}

type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolInput struct {
	FilePath   string `json:"file_path"`
	Content    string `json:"content"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
	Offset     int    `json:"offset"`
	Limit      int    `json:"limit"`
}

// workspace runs the file tools inside one directory. os.Root refuses
// every way out: "..", absolute paths elsewhere and symlinks pointing
// outside, so a model cannot make the agent touch anything else.
type workspace struct {
	root *os.Root
	// dirs are the directory as given and with its symlinks resolved: an
	// absolute path may name it either way (/tmp is a link on some systems).
	dirs []string
}

func openWorkspace(dir string) (*workspace, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	w := &workspace{root: root, dirs: []string{filepath.Clean(dir)}}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != w.dirs[0] {
		w.dirs = append(w.dirs, real)
	}
	return w, nil
}

func (w *workspace) Close() error { return w.root.Close() }

// name turns a tool's file_path into a name inside the workspace. Paths
// leaving it are refused here with a clear message; os.Root still guards
// against symlinks.
func (w *workspace) name(path string) (string, error) {
	if path == "" {
		return "", errors.New("file_path is required")
	}
	outside := fmt.Errorf("%s is outside the working directory; the demo agent only works inside it", path)
	if filepath.IsAbs(path) {
		for _, d := range w.dirs {
			if rel, err := filepath.Rel(d, filepath.Clean(path)); err == nil && !escapes(rel) {
				return rel, nil
			}
		}
		return "", outside
	}
	if rel := filepath.Clean(path); !escapes(rel) {
		return rel, nil
	}
	return "", outside
}

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// run executes one tool call and returns the text of its result; an error
// is reported to the model as a failed call.
func (w *workspace) run(tool string, raw json.RawMessage) (string, error) {
	if tool != "Read" && tool != "Write" && tool != "Edit" {
		return "", fmt.Errorf("no such tool available: %s", tool)
	}
	var in toolInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return "", fmt.Errorf("invalid input for %s: %v", tool, err)
	}
	name, err := w.name(in.FilePath)
	if err != nil {
		return "", err
	}
	switch tool {
	case "Read":
		return w.read(name, in)
	case "Write":
		return w.write(name, in)
	default:
		return w.edit(name, in)
	}
}

func (w *workspace) read(name string, in toolInput) (string, error) {
	b, err := w.root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("file does not exist")
	} else if err != nil {
		return "", err
	}
	lines := strings.SplitAfter(string(b), "\n")
	first := max(in.Offset, 1)
	limit := in.Limit
	if limit <= 0 || limit > maxReadLines {
		limit = maxReadLines
	}
	// Numbered like `cat -n`, which is how the model refers to lines.
	var out strings.Builder
	for i := first - 1; i < len(lines) && i < first-1+limit; i++ {
		fmt.Fprintf(&out, "%d\t%s", i+1, lines[i])
	}
	return out.String(), nil
}

func (w *workspace) write(name string, in toolInput) (string, error) {
	_, statErr := w.root.Stat(name)
	if dir := filepath.Dir(name); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	}
	if err := w.root.WriteFile(name, []byte(in.Content), 0o644); err != nil {
		return "", err
	}
	if statErr == nil {
		return "The file " + in.FilePath + " has been updated.", nil
	}
	return "File created successfully at: " + in.FilePath, nil
}

func (w *workspace) edit(name string, in toolInput) (string, error) {
	if in.OldString == "" {
		return "", errors.New("old_string is empty; use Write to create a file")
	}
	if in.OldString == in.NewString {
		return "", errors.New("old_string and new_string are the same: nothing to change")
	}
	b, err := w.root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("file does not exist")
	} else if err != nil {
		return "", err
	}
	text := string(b)
	switch n := strings.Count(text, in.OldString); {
	case n == 0:
		return "", errors.New("string to replace not found in file")
	case n > 1 && !in.ReplaceAll:
		return "", fmt.Errorf("found %d matches of the string to replace, but replace_all is false; give more context to make it unique", n)
	}
	if in.ReplaceAll {
		text = strings.ReplaceAll(text, in.OldString, in.NewString)
	} else {
		text = strings.Replace(text, in.OldString, in.NewString, 1)
	}
	if err := w.root.WriteFile(name, []byte(text), 0o644); err != nil {
		return "", err
	}
	return "The file " + in.FilePath + " has been updated successfully.", nil
}
