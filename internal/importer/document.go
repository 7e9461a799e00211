// Package importer turns a product requirements document (a Markdown, text
// or JSON file, or a GitHub issue) into a ralph project's three working
// files — .ralph/PROMPT.md, .ralph/fix_plan.md and .ralph/specs/requirements.md
// — by running the agent once, then checks that the files are there.
//
// The pure parts (issue → Markdown, the completeness score, issue selection,
// the prompt) take plain values and are table-tested; Run is the one place
// that starts the agent and reads the disk.
package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Formats of a Document.
const (
	FormatMarkdown = "markdown"
	FormatText     = "text"
	FormatJSON     = "json"
)

// maxDocument bounds the input: the prompt travels as one command-line
// argument, which Linux caps at 128 KiB.
const maxDocument = 96 << 10

// Document is the PRD the agent converts.
type Document struct {
	// Source says where it came from, for people: "prd.md", "GitHub issue
	// octo/hello#12".
	Source string
	// Format is FormatMarkdown, FormatText or FormatJSON.
	Format string
	// Text is what the agent reads; JSON is pretty-printed.
	Text string
	// scored, when set, is what the score reads instead of Text: an
	// issue's own words without the metadata ralph added around them.
	scored string
}

// ParseDocument reads a PRD file's content. The format comes from the name
// (.md/.markdown, .json, anything else is text), and content that is a JSON
// object or array is read as JSON whatever its name. A .json file that is
// not valid JSON is an error, not text: its author meant structure.
func ParseDocument(name string, data []byte) (Document, error) {
	doc := Document{Source: name}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, fmt.Errorf("%s is empty", name)
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return doc, fmt.Errorf("%s is not a text file (Markdown, text or JSON)", name)
	}
	if len(data) > maxDocument {
		return doc, fmt.Errorf("%s is %d KiB; the agent takes at most %d KiB: shorten it or split it", name, len(data)>>10, maxDocument>>10)
	}
	ext := strings.ToLower(filepath.Ext(name))
	trimmed := bytes.TrimSpace(data)
	looksJSON := trimmed[0] == '{' || trimmed[0] == '['
	if ext == ".json" || (looksJSON && json.Valid(trimmed)) {
		var buf bytes.Buffer
		if err := json.Indent(&buf, trimmed, "", "  "); err != nil {
			return doc, fmt.Errorf("%s: invalid JSON: %w", name, err)
		}
		doc.Format, doc.Text = FormatJSON, buf.String()+"\n"
		return doc, nil
	}
	doc.Format = FormatText
	if ext == ".md" || ext == ".markdown" || ext == ".mdown" {
		doc.Format = FormatMarkdown
	}
	doc.Text = strings.ReplaceAll(string(data), "\r\n", "\n")
	return doc, nil
}

// scoringText is what the score reads: for JSON, an outline in which keys
// become headings and arrays become lists, so "acceptance_criteria": [...]
// counts like an "Acceptance criteria" section with items.
func (d Document) scoringText() string {
	if d.scored != "" {
		return d.scored
	}
	if d.Format != FormatJSON {
		return d.Text
	}
	var v any
	if err := json.Unmarshal([]byte(d.Text), &v); err != nil {
		return d.Text
	}
	var b strings.Builder
	outline(&b, v, 1)
	return b.String()
}

func outline(b *strings.Builder, v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		// Sorted keys keep the score deterministic.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			fmt.Fprintf(b, "%s %s\n\n", strings.Repeat("#", min(depth, 6)), strings.ReplaceAll(k, "_", " "))
			outline(b, x[k], depth+1)
		}
	case []any:
		for _, it := range x {
			if s, ok := it.(string); ok {
				fmt.Fprintf(b, "- %s\n", s)
				continue
			}
			outline(b, it, depth)
		}
		b.WriteString("\n")
	case string:
		b.WriteString(x + "\n\n")
	case nil:
	default:
		fmt.Fprintf(b, "%v\n\n", x)
	}
}
