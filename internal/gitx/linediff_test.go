package gitx

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	t.Parallel()
	// eightAroundBlank is eight lines with no match, a blank line amid
	// them; the other side has four blank lines. The least edit keeps a
	// blank line; git drops it first, as a line that matches too often
	// amid lines that match nothing, and counts it changed.
	eightAroundBlank := "u1\nu2\nu3\nu4\n\nu5\nu6\nu7\n"
	tests := []struct {
		name           string
		a, b           string
		added, removed int
	}{
		{"both empty", "", "", 0, 0},
		{"same", "a\nb\n", "a\nb\n", 0, 0},
		{"newline added at the end", "a\nb", "a\nb\n", 1, 1},
		{"newline removed at the end", "a\n", "a", 1, 1},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"new file without a final newline", "", "a\nb", 2, 0},
		{"emptied", "a\nb\nc\n", "", 0, 3},
		{"lines inserted", "a\nc\n", "a\nb\nb2\nc\n", 2, 0},
		{"lines moved", "a\nb\nc\nd\n", "c\nd\na\nb\n", 2, 2},
		{"a blank line amid unmatched ones", eightAroundBlank, "\n\n\n\n", 4, 8},
		{"the same, the other way", "\n\n\n\n", eightAroundBlank, 8, 4},
		{"repeated lines", "x\nx\nx\n", "x\nx\n", 0, 1},
		{"a line and the same with a carriage return", "a\n", "a\r\n", 1, 1},
	}
	for _, tt := range tests {
		added, removed, ok := lineDiff([]byte(tt.a), []byte(tt.b))
		if !ok || added != tt.added || removed != tt.removed {
			t.Errorf("%s: +%d -%d ok=%v, want +%d -%d", tt.name, added, removed, ok, tt.added, tt.removed)
		}
	}
}

// Past maxEdit lines of edit lineDiff does not answer: git's heuristics
// for costly diffs could count otherwise. (Lines with no match on the
// other side do not count: they are dropped before the search.)
func TestLineDiffGivesUpOnLargeEdits(t *testing.T) {
	t.Parallel()
	reversed := func(n int) (a, b []byte) {
		for i := range n {
			a = fmt.Appendf(a, "line %d\n", i)
			b = fmt.Appendf(b, "line %d\n", n-1-i)
		}
		return a, b
	}
	if _, _, ok := lineDiff(reversed(300)); ok {
		t.Error("300 lines reversed (an edit of 598) answered")
	}
	if added, removed, ok := lineDiff(reversed(100)); !ok || added != 99 || removed != 99 {
		t.Errorf("100 lines reversed: +%d -%d ok=%v, want +99 -99", added, removed, ok)
	}
	a, b := reversed(300)
	if added, removed, ok := lineDiff(a, append(b, []byte("other\n")...)); ok || added != 0 || removed != 0 {
		t.Errorf("gave up with +%d -%d ok=%v", added, removed, ok)
	}
}

// lcs is the longest common subsequence's length, by the textbook table:
// the independent answer editDistance must agree with.
func lcs(a, b []int32) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			default:
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// FuzzLineDiff checks the search against the table on small inputs, and
// that lineDiff's counts are never below the least edit and always add up
// to the difference in length.
func FuzzLineDiff(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd"))
	f.Add([]byte(""), []byte("x\n"))
	f.Add([]byte("u1\nu2\nu3\nu4\n\nu5\nu6\nu7\n"), []byte("\n\n\n\n"))
	f.Add([]byte("a\na\nb\na\n"), []byte("b\na\na\nb\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 2000 || len(b) > 2000 {
			return
		}
		classes := map[string]int32{}
		la, lb := classify(a, classes), classify(b, classes)
		common := lcs(la, lb)
		least := len(la) + len(lb) - 2*common
		d, ok := editDistance(la, lb, maxEdit)
		if ok != (least <= maxEdit) || ok && d != least {
			t.Fatalf("editDistance = %d, %v; the table says %d", d, ok, least)
		}
		if small, ok := editDistance(la, lb, least-1); least > 0 && ok {
			t.Fatalf("editDistance with a bound below %d answered %d", least, small)
		}
		added, removed, ok := lineDiff(a, b)
		if !ok {
			return
		}
		if added < len(lb)-common || removed < len(la)-common || added-removed != len(lb)-len(la) {
			t.Fatalf("lineDiff = +%d -%d for %d and %d lines with %d in common", added, removed, len(la), len(lb), common)
		}
		if bytes.Equal(a, b) && (added != 0 || removed != 0) {
			t.Fatalf("same text: +%d -%d", added, removed)
		}
	})
}

// lineDiff counts what git's own diff counts, on random small texts over
// few distinct lines (so that lines match often and xdiff's dropping of
// lines that match too often comes into play), with `git diff --no-index
// --numstat` as the judge.
func TestLineDiffMatchesGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(29, 1))
	words := []string{"", "", "", "}", "}", "a", "b", "return nil"}
	text := func() []byte {
		var b bytes.Buffer
		n := rng.IntN(40)
		for i := range n {
			// Often a unique line, so that runs with no match appear.
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, "unique %d %d", rng.Uint32(), i)
			} else {
				b.WriteString(words[rng.IntN(len(words))])
			}
			if i < n-1 || rng.IntN(4) > 0 {
				b.WriteByte('\n')
			}
		}
		return b.Bytes()
	}
	runs, beyondLeast := 300, 0
	if testing.Short() {
		runs = 60
	}
	for i := range runs {
		a, b := text(), text()
		switch rng.IntN(3) {
		case 0:
			b = mutate(rng, a, words)
		case 1:
			// A rewrite: new lines with a few often-seen ones amid them,
			// where the old text has those often.
			a, b = rewrite(rng, a, words)
		}
		pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := os.WriteFile(pa, a, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pb, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "diff", "--no-index", "--numstat", "a", "b")
		cmd.Dir = dir
		out, _ := cmd.Output() // exit status 1: they differ
		var wantAdded, wantRemoved int
		if len(out) > 0 {
			if _, err := fmt.Sscanf(string(out), "%d\t%d\t", &wantAdded, &wantRemoved); err != nil {
				t.Fatalf("git said %q: %v", out, err)
			}
		}
		added, removed, ok := lineDiff(a, b)
		if !ok || added != wantAdded || removed != wantRemoved {
			t.Fatalf("case %d: lineDiff +%d -%d ok=%v, git +%d -%d\n--- a\n%q\n--- b\n%q", i, added, removed, ok, wantAdded, wantRemoved, a, b)
		}
		classes := map[string]int32{}
		if lb := classify(b, classes); added > len(lb)-lcs(classify(a, classes), lb) {
			beyondLeast++
		}
	}
	// Else the cases would not tell lineDiff from a plain least edit.
	if beyondLeast == 0 {
		t.Errorf("in %d cases git never counted more than the least edit", runs)
	}
	t.Logf("%d of %d cases count more than the least edit", beyondLeast, runs)
}

// rewrite puts runs of new lines, a common one now and then, among the
// lines of text, and returns the text with many common lines added.
func rewrite(rng *rand.Rand, text []byte, words []string) (old, new []byte) {
	for range 4 + rng.IntN(12) {
		old = append(old, words[rng.IntN(3)]+"\n"...)
	}
	old = append(old, text...)
	new = append(new, text[:len(text)/2]...)
	for i := range 5 + rng.IntN(30) {
		if rng.IntN(6) == 0 {
			new = append(new, words[rng.IntN(3)]+"\n"...)
		} else {
			new = fmt.Appendf(new, "rewritten %d\n", i)
		}
	}
	return old, new
}

// mutate makes a few line edits to text: replaced, inserted, removed.
func mutate(rng *rand.Rand, text []byte, words []string) []byte {
	lines := strings.SplitAfter(string(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for range 1 + rng.IntN(6) {
		i := rng.IntN(len(lines) + 1)
		w := words[rng.IntN(len(words))] + "\n"
		switch rng.IntN(3) {
		case 0:
			lines = append(lines[:i], append([]string{w}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		default:
			if i < len(lines) {
				lines[i] = fmt.Sprintf("changed %d\n", rng.Uint32())
			}
		}
	}
	return []byte(strings.Join(lines, ""))
}
