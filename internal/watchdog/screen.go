// Package watchdog follows an interactive agent by reading its terminal:
// the status blocks it prints (RALPH_STATUS and the other dialects that
// internal/analyze reads), told apart from what people type, the output of
// the tools the agent runs and the frame of its interface.
//
// Parse is pure (the text of a captured pane in, what it shows out), Step
// decides what one more look means for the session's task, and Tmux reads
// panes without ever typing into them.
package watchdog

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"ralph/internal/analyze"
	"ralph/internal/termsafe"
)

// Screen is what one capture shows.
type Screen struct {
	// Block is the last complete status block in the agent's own words;
	// nil when there is none.
	Block *Block
	// Claude: Claude Code's interface was recognised, so only its
	// assistant messages were read.
	Claude bool
	// Busy: the agent is at work (Claude Code's "esc to interrupt"); a
	// block it may still be writing is not to be taken yet.
	Busy bool
}

// Block is one status block on the screen.
type Block struct {
	Dialect string
	Fields  map[string]string
	// Line is where the block starts in the capture, 1-based.
	Line int
	// Key tells this block from the same fields printed again later: it
	// covers the block and the words before it (the whole message in
	// Claude Code, contextLines lines otherwise).
	Key string
	// Whole: every line the key covers was on the capture. A block whose
	// context scrolled off the top may be one already taken, seen again.
	Whole bool
	// Analysis is internal/analyze's reading of the message up to the
	// block's end: status, exit signal, files, errors.
	Analysis *analyze.Analysis
}

// contextLines is how many lines above a block in a plain terminal make
// its key.
const contextLines = 5

// maxLines bounds the lines read of one capture (the newest are kept).
const maxLines = 4000

// segment is a run of lines written by the agent.
type segment struct {
	lines []string // as the agent wrote them (Claude Code's margin removed)
	at    []int    // each line's index in the capture
	whole bool     // its beginning is on the capture
}

func (s *segment) add(l string, at int) {
	s.lines = append(s.lines, l)
	s.at = append(s.at, at)
}

// Parse reads one capture of a pane (`tmux capture-pane -p`: text without
// colours; stray escape sequences and carriage returns are dropped).
func Parse(capture string) Screen {
	lines := splitLines(capture)
	s := Screen{Claude: isClaude(lines)}
	var segs []segment
	if s.Claude {
		segs = claudeMessages(lines)
		s.Busy = claudeBusy(lines)
	} else {
		segs = []segment{plainText(lines)}
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if b := lastBlock(segs[i]); b != nil {
			s.Block = b
			break
		}
	}
	return s
}

func splitLines(capture string) []string {
	text := termsafe.String(strings.ReplaceAll(capture, "\u00a0", " "))
	lines := strings.Split(text, "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// Claude Code starts each assistant message and each tool call with a
// circle (⏺ on macOS, ● elsewhere) in the first column.
func claudeMarker(l string) (rest string, ok bool) {
	for _, m := range []string{"⏺", "●"} {
		if r, ok := strings.CutPrefix(l, m); ok {
			return strings.TrimPrefix(r, " "), true
		}
	}
	return "", false
}

func isClaude(lines []string) bool {
	for _, l := range lines {
		if _, ok := claudeMarker(l); ok {
			return true
		}
		if strings.Contains(l, "esc to interrupt") || strings.Contains(l, "? for shortcuts") || strings.Contains(l, "Welcome to Claude Code") {
			return true
		}
	}
	return false
}

// claudeBusy: the spinner line ("✻ Thinking… (12s · esc to interrupt)")
// shows above the prompt while the agent works.
func claudeBusy(lines []string) bool {
	seen := 0
	for i := len(lines) - 1; i >= 0 && seen < 12; i-- {
		if lines[i] == "" {
			continue
		}
		seen++
		if strings.Contains(lines[i], "esc to interrupt") {
			return true
		}
	}
	return false
}

// toolCall is a tool call's heading: "Read(file)", "Bash(go test ./...)".
var toolCall = regexp.MustCompile(`^[A-Za-z_][\w.-]*\(`)

// frame reports a line of a box the interface draws (the prompt, a
// dialog, the welcome banner) or a rule across the screen.
func frame(t string) bool {
	return strings.HasPrefix(t, "│") || strings.HasPrefix(t, "╭") || strings.HasPrefix(t, "╰") ||
		strings.HasPrefix(t, "┌") || strings.HasPrefix(t, "└") || strings.HasPrefix(t, "─") || strings.HasPrefix(t, "━")
}

// claudeMessages returns the assistant messages of a Claude Code screen.
// What a person typed (a "> " prompt and its indented lines), a tool
// call and its output (under "⎿"), the boxes and the spinner are left
// out. Lines above the first line in the first column belong to a
// message whose start scrolled off: whose they are cannot be told, so
// they are left out too.
func claudeMessages(lines []string) []segment {
	const (
		unknown = iota
		agent
		other
	)
	var out []segment
	kind := unknown
	for i, l := range lines {
		if l == "" {
			if kind == agent {
				out[len(out)-1].add("", i)
			}
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			kind = other
			if rest, ok := claudeMarker(l); ok && !toolCall.MatchString(rest) {
				kind = agent
				out = append(out, segment{whole: true})
				out[len(out)-1].add(rest, i)
			}
			continue
		}
		t := strings.TrimLeft(l, " \t")
		switch {
		case strings.HasPrefix(t, "⎿"):
			kind = other // a tool's output, until the next message
		case kind == agent && !frame(t):
			out[len(out)-1].add(dedent(l, 2), i)
		}
	}
	return out
}

// dedent removes up to n leading spaces: Claude Code's margin.
func dedent(l string, n int) string {
	for n > 0 && strings.HasPrefix(l, " ") {
		l, n = l[1:], n-1
	}
	return l
}

// plainText is every line of a terminal that is not Claude Code's, but for
// the boxes drawn on it.
func plainText(lines []string) segment {
	var s segment
	for i, l := range lines {
		if !frame(strings.TrimLeft(l, " \t")) {
			s.add(l, i)
		}
	}
	return s
}

// lastBlock finds the segment's last complete status block, where it
// starts and ends, and keys it by the words before it.
func lastBlock(seg segment) *Block {
	lines := seedHeader(seg.lines)
	full := read(lines)
	if full == nil || full.StatusBlock == nil {
		return nil
	}
	want := full.StatusBlock
	n := len(lines)
	// The analyzer says which block, not where. As it is the last one,
	// every rest of the segment that begins at or before its first line
	// still holds a block and none that begins after it does: a binary
	// search finds the start, another the first line that completes it.
	start := sort.Search(n, func(s int) bool { return !holds(read(lines[s+1:]), nil) })
	start = min(start, n-1)
	end := start + 1 + sort.Search(n-start, func(k int) bool { return holds(read(lines[start:start+k+1]), want) })
	end = min(end, n)
	from, whole := 0, seg.whole
	if !seg.whole {
		from = max(start-contextLines, 0)
		whole = start >= contextLines
	}
	words := lines[from:end]
	sum := sha256.Sum256([]byte(strings.Join(words, "\n")))
	a := read(words)
	if !holds(a, want) {
		a = full
	}
	return &Block{Dialect: want.Dialect, Fields: maps.Clone(want.Fields), Line: seg.at[start] + 1,
		Key: hex.EncodeToString(sum[:8]), Whole: whole, Analysis: a}
}

// holds reports whether a found a status block: any block when want is
// nil, else one with want's fields.
func holds(a *analyze.Analysis, want *analyze.StatusBlock) bool {
	if a == nil || a.StatusBlock == nil {
		return false
	}
	return want == nil || (a.StatusBlock.Dialect == want.Dialect && maps.Equal(a.StatusBlock.Fields, want.Fields))
}

// read is the analyzer's reading of some of the agent's lines, as the
// plain text they are.
func read(lines []string) *analyze.Analysis {
	if len(lines) == 0 {
		return nil
	}
	a, err := analyze.Analyze(strings.NewReader(strings.Join(lines, "\n")), analyze.Options{ExitCode: -1})
	if err != nil {
		return nil
	}
	return a
}

var seedField = regexp.MustCompile(`^[A-Z][A-Z0-9_]*:(\s|$)`)

// wrapWidth: a line after one at least this long may be its wrapped rest
// (Claude Code wraps a message at the screen's width, and screens are
// seldom narrower).
const wrapWidth = 60

// seedHeader indents the KEY: value lines right under a bare
// "RALPH_STATUS:" line — the form of the seed's protocol, which agents
// print as is in a terminal — so that the analyzer reads them as the
// header block they are, with the rest of a value wrapped onto the next
// line. Under a "## RALPH_STATUS" heading the same lines
// are a task file shown on the screen, not the agent's word: left alone.
func seedHeader(lines []string) []string {
	var out []string
	prev := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		head := strings.Trim(strings.TrimSpace(l), "`*_")
		underHeading := strings.HasPrefix(prev, "#") && strings.Contains(prev, "RALPH_STATUS")
		if (head != "RALPH_STATUS:" && head != "CLARITY_STATUS:") || underHeading {
			if strings.TrimSpace(l) != "" {
				prev = strings.TrimSpace(l)
			}
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		for j, h := i+1, i; j < len(lines); j++ {
			rest, ok := strings.CutPrefix(lines[j], indent)
			wrapped := j > h+1 && rest != "" && utf8.RuneCountInString(lines[j-1]) >= wrapWidth
			if !ok || !(seedField.MatchString(rest) || wrapped) {
				break
			}
			if out == nil {
				out = append([]string(nil), lines...)
			}
			out[j] = indent + "  " + rest
			i = j
		}
		prev = head
	}
	if out == nil {
		return lines
	}
	return out
}
