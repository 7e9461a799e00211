package importer

import (
	"fmt"
	"slices"
	"strings"

	"ralph/internal/github"
)

// Selection modes for several matching issues.
const (
	SelectFirst    = "first"    // the first as GitHub returned them
	SelectPriority = "priority" // the most urgent, then the oldest
)

// Priority is an issue's urgency from its labels; lower is more urgent.
type Priority int

// Priorities, most urgent first. An issue without a priority label ranks
// between medium and low: nobody said it can wait, nobody said it is
// urgent.
const (
	Critical Priority = iota
	High
	Medium
	Unranked
	Low
)

func (p Priority) String() string {
	return [...]string{"critical", "high", "medium", "unranked", "low"}[p]
}

// levelWords map a word of a label to a priority.
var levelWords = map[string]Priority{
	"p0": Critical, "critical": Critical, "urgent": Critical, "blocker": Critical, "highest": Critical,
	"p1": High, "high": High,
	"p2": Medium, "medium": Medium, "normal": Medium,
	"p3": Low, "p4": Low, "low": Low, "lowest": Low, "minor": Low,
}

// priorityWords mark a label as being about priority ("priority: high",
// "prio/low", "severity-critical").
var priorityWords = []string{"priority", "prio", "pri", "severity", "sev"}

// PriorityOf reads an issue's priority from its labels: "P0"–"P4",
// "priority:high" (also "priority/high", "priority-high", "high priority",
// "severity: critical"), and labels that are only a level word ("critical",
// "urgent", "blocker", "high", "low"). A label such as "low-hanging fruit"
// is not a priority. The most urgent label wins; label is the one that
// decided, "" when none did.
func PriorityOf(labels []string) (p Priority, label string) {
	p = Unranked
	for _, l := range labels {
		words := strings.FieldsFunc(strings.ToLower(l), func(r rune) bool {
			return r == ':' || r == '/' || r == '-' || r == '_' || r == ' ' || r == '.' || r == '='
		})
		lp, ok := labelPriority(words)
		if ok && (label == "" || lp < p) {
			p, label = lp, l
		}
	}
	return p, label
}

func labelPriority(words []string) (Priority, bool) {
	if len(words) == 0 {
		return 0, false
	}
	if lp, ok := levelWords[words[0]]; ok && strings.HasPrefix(words[0], "p") && len(words[0]) == 2 {
		return lp, true // "P1", "P1 - high"
	}
	// A label is about priority when it is a single word, names priority
	// or severity, or uses a word that only ever means urgency.
	about := len(words) == 1
	for _, w := range words {
		if slices.Contains(priorityWords, w) || w == "critical" || w == "urgent" || w == "blocker" {
			about = true
		}
	}
	if !about {
		return 0, false
	}
	for _, w := range words {
		if lp, ok := levelWords[w]; ok {
			return lp, true
		}
	}
	return 0, false
}

// Candidate is one matching issue as the selection saw it.
type Candidate struct {
	Issue         github.Issue
	Priority      Priority
	PriorityLabel string
	// Excluded names the --exclude-label that removed it, "" if kept.
	Excluded string
}

// Select picks one issue among those that matched. Issues carrying one of
// the exclude labels (any case) are set aside; of the rest, mode "first"
// takes the first as given and "priority" the most urgent by PriorityOf,
// then the oldest, then the lowest number. It returns every candidate in
// the order considered (excluded ones last) and the index of the chosen
// one; an error when nothing is left.
func Select(issues []github.Issue, mode string, exclude []string) ([]Candidate, int, error) {
	if mode == "" {
		mode = SelectFirst
	}
	if mode != SelectFirst && mode != SelectPriority {
		return nil, -1, fmt.Errorf("--select %q: want first or priority", mode)
	}
	var kept, dropped []Candidate
	for _, is := range issues {
		c := Candidate{Issue: is}
		c.Priority, c.PriorityLabel = PriorityOf(is.Labels)
		c.Excluded = excludedBy(is.Labels, exclude)
		if c.Excluded != "" {
			dropped = append(dropped, c)
		} else {
			kept = append(kept, c)
		}
	}
	if mode == SelectPriority {
		slices.SortStableFunc(kept, func(a, b Candidate) int {
			if a.Priority != b.Priority {
				return int(a.Priority) - int(b.Priority)
			}
			if c := a.Issue.CreatedAt.Compare(b.Issue.CreatedAt); c != 0 {
				return c
			}
			return a.Issue.Number - b.Issue.Number
		})
	}
	all := append(kept, dropped...)
	if len(kept) == 0 {
		if len(dropped) > 0 {
			return all, -1, fmt.Errorf("no issue left: all %d matching issue(s) carry an excluded label", len(dropped))
		}
		return all, -1, fmt.Errorf("no issue matched")
	}
	return all, 0, nil
}

// excludedBy returns the first label of the issue that is excluded.
func excludedBy(labels, exclude []string) string {
	for _, l := range labels {
		for _, x := range exclude {
			if strings.EqualFold(strings.TrimSpace(x), l) {
				return l
			}
		}
	}
	return ""
}
