// Package suggest finds the known name a mistyped one was probably meant to
// be: a command, a flag, a configuration key.
package suggest

import "strings"

// Closest returns the candidate nearest to name, or "" when none is close
// enough to be a likely typo: one edit for short names, two from 8
// characters on. Swapping two neighbouring letters is one edit, the most
// common slip at a keyboard ("rnu", "tsak", "stauts"). Names under 4
// characters match only exactly (modulo case, which the caller folds) or
// with one such swap: any other single edit of "run" is as close to "rm".
//
// When two candidates are equally near, the one whose length is closer to
// name's wins, then the one with the same letters, then the first given:
// "stauts" means "status", not "stats".
func Closest(name string, candidates []string) string {
	if len(name) > 64 { // nothing real is that long; skip the quadratic work
		return ""
	}
	best, bestDist, bestRank := "", -1, 0
	for _, c := range candidates {
		d, r := Distance(name, c), rank(name, c)
		if bestDist < 0 || d < bestDist || (d == bestDist && r < bestRank) {
			best, bestDist, bestRank = c, d, r
		}
	}
	if bestDist < 0 {
		return ""
	}
	if len(name) < 4 {
		if bestDist == 0 || (bestDist == 1 && sameLetters(name, best)) {
			return best
		}
		return ""
	}
	limit := 1
	if len(name) >= 8 {
		limit = 2
	}
	if bestDist <= limit {
		return best
	}
	return ""
}

// rank orders candidates at the same distance: smaller is likelier.
func rank(name, c string) int {
	r := 2 * abs(len(name)-len(c))
	if !sameLetters(name, c) {
		r++
	}
	return r
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// sameLetters reports whether a and b are anagrams (a swap, not a new
// letter).
func sameLetters(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var n [256]int
	for i := range len(a) {
		n[a[i]]++
		n[b[i]]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}

// Distance is the optimal-string-alignment distance between a and b, in
// bytes (the names compared are ASCII): Levenshtein's insertions,
// deletions and substitutions, plus the swap of two adjacent bytes as one
// edit.
func Distance(a, b string) int {
	a, b = strings.ToLower(a), strings.ToLower(b)
	// Three rows: the swap looks two rows back.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
