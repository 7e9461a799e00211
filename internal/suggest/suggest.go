// Package suggest finds the known name a mistyped one was probably meant to
// be: a command, a flag, a configuration key.
package suggest

// Closest returns the candidate nearest to name, or "" when none is close
// enough to be a likely typo: one edit for short names, two from 8
// characters on; names under 4 characters only match exactly (modulo case,
// which the caller folds).
func Closest(name string, candidates []string) string {
	if len(name) > 64 { // nothing real is that long; skip the quadratic work
		return ""
	}
	best, bestDist := "", -1
	for _, c := range candidates {
		if d := Distance(name, c); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := 1
	if len(name) >= 8 {
		limit = 2
	}
	if len(name) < 4 && bestDist > 0 {
		return ""
	}
	if bestDist >= 0 && bestDist <= limit {
		return best
	}
	return ""
}

// Distance is the Levenshtein distance between a and b, in bytes (the
// names compared are ASCII).
func Distance(a, b string) int {
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
