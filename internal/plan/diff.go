package plan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Change is what happened to the plan between two iterations.
type Change struct {
	Checked     int `json:"checked"`      // matched tasks that went from open to done
	Unchecked   int `json:"unchecked"`    // matched tasks that went from done to open
	Added       int `json:"added"`        // tasks in after with no counterpart in before
	AddedDone   int `json:"added_done"`   // of Added, those already checked
	Removed     int `json:"removed"`      // tasks in before with no counterpart in after
	RemovedOpen int `json:"removed_open"` // of Removed, those still open
}

// Progress reports whether the plan gained checked items. A task that shows
// up already checked counts: agents often move a finished task into the
// Completed section and reword it, which no text match can follow.
func (c Change) Progress() bool {
	return c.Checked > 0 || c.AddedDone > 0
}

// Changed reports whether any task was checked, unchecked, added or removed.
func (c Change) Changed() bool {
	return c != Change{}
}

func (c Change) String() string {
	if !c.Changed() {
		return "no change"
	}
	var parts []string
	if c.Checked > 0 {
		parts = append(parts, fmt.Sprintf("%d checked", c.Checked))
	}
	if c.Unchecked > 0 {
		parts = append(parts, fmt.Sprintf("%d unchecked", c.Unchecked))
	}
	if c.Added > 0 {
		s := fmt.Sprintf("%d added", c.Added)
		if c.AddedDone > 0 {
			s += fmt.Sprintf(" (%d already checked)", c.AddedDone)
		}
		parts = append(parts, s)
	}
	if c.Removed > 0 {
		s := fmt.Sprintf("%d removed", c.Removed)
		if c.RemovedOpen > 0 {
			s += fmt.Sprintf(" (%d open)", c.RemovedOpen)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Diff compares two versions of a plan. Tasks are matched by their
// normalised text, not by line, because agents insert, delete and move lines
// between iterations. Duplicates pair up in file order. Tasks left over
// after the exact pass are paired when one text is a whole-word prefix of the
// other, which follows edits like "Add tests" → "Add tests (done in 3f2a1c)".
func Diff(before, after Plan) Change {
	bKeys := taskKeys(before.Tasks)
	aKeys := taskKeys(after.Tasks)

	byKey := make(map[string][]int, len(aKeys))
	for j, k := range aKeys {
		byKey[k] = append(byKey[k], j)
	}
	pairOf := make([]int, len(bKeys)) // before index → after index, or -1
	usedA := make([]bool, len(aKeys))
	var leftB []int
	for i, k := range bKeys {
		pairOf[i] = -1
		if q := byKey[k]; len(q) > 0 {
			pairOf[i], usedA[q[0]] = q[0], true
			byKey[k] = q[1:]
			continue
		}
		leftB = append(leftB, i)
	}

	pairByPrefix(bKeys, aKeys, leftB, pairOf, usedA)

	var c Change
	for i, j := range pairOf {
		b := before.Tasks[i]
		if j < 0 {
			c.Removed++
			if !b.Done {
				c.RemovedOpen++
			}
			continue
		}
		switch a := after.Tasks[j]; {
		case !b.Done && a.Done:
			c.Checked++
		case b.Done && !a.Done:
			c.Unchecked++
		}
	}
	for j, used := range usedA {
		if !used {
			c.Added++
			if after.Tasks[j].Done {
				c.AddedDone++
			}
		}
	}
	return c
}

func taskKeys(tasks []Task) []string {
	keys := make([]string, len(tasks))
	for i, t := range tasks {
		keys[i] = taskKey(t.Text)
	}
	return keys
}

// taskKey keeps only letters and digits, lower-cased and single-spaced, so
// that markup an agent adds when finishing a task (~~strike~~, **bold**,
// a ✅, a trailing period) does not make it look like a different task.
func taskKey(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	gap := false
	for i := 0; i < len(text); {
		// Plans are mostly ASCII; the byte path skips rune decoding and the
		// Unicode tables, which is most of Diff's cost on a large plan.
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		var keep bool
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			keep = true
		case 'A' <= r && r <= 'Z':
			r, keep = r+'a'-'A', true
		case r >= utf8.RuneSelf:
			keep = unicode.IsLetter(r) || unicode.IsDigit(r)
			r = unicode.ToLower(r)
		}
		if !keep {
			gap = b.Len() > 0
			continue
		}
		if gap {
			b.WriteByte(' ')
			gap = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		// A text of symbols only still deserves to match itself.
		return strings.ToLower(strings.TrimSpace(text))
	}
	return b.String()
}

// pairByPrefix pairs leftover tasks whose keys are whole-word prefixes of
// one another. It indexes every word prefix of the leftover after-keys, so
// the cost grows with the number of words, not with the square of the
// number of tasks: a reworded 2,000-task plan must not stall the loop.
// A before task prefers the first after task that extends its text (the
// usual edit: a note appended), then the longest after text it extends.
func pairByPrefix(bKeys, aKeys []string, leftB, pairOf []int, usedA []bool) {
	if len(leftB) == 0 {
		return
	}
	extends := make(map[string][]int) // word prefix → after tasks starting with it
	exact := make(map[string][]int)   // key → after tasks with exactly that key
	for j, k := range aKeys {
		if usedA[j] {
			continue
		}
		exact[k] = append(exact[k], j)
		for _, p := range wordPrefixes(k) {
			extends[p] = append(extends[p], j)
		}
	}
	take := func(m map[string][]int, k string) int {
		q := m[k]
		for len(q) > 0 && usedA[q[0]] {
			q = q[1:]
		}
		m[k] = q
		if len(q) == 0 {
			return -1
		}
		usedA[q[0]] = true
		return q[0]
	}
	for _, i := range leftB {
		if j := take(extends, bKeys[i]); j >= 0 {
			pairOf[i] = j
			continue
		}
		ps := wordPrefixes(bKeys[i])
		for n := len(ps) - 1; n >= 0; n-- {
			if j := take(exact, ps[n]); j >= 0 {
				pairOf[i] = j
				break
			}
		}
	}
}

// wordPrefixes lists the proper prefixes of a key that end at a word
// boundary, shortest first: "add unit tests" → "add", "add unit".
func wordPrefixes(k string) []string {
	var ps []string
	for i := 0; i < len(k); i++ {
		if k[i] == ' ' {
			ps = append(ps, k[:i])
		}
	}
	return ps
}
