package gitx

// The lines one file's two versions differ by, counted as `git diff
// --numstat` counts them, so that a call which moved no HEAD can have its
// receipt's figures without a git process (sincelines.go). The count is
// the number of lines git's own diff (xdiff, its default Myers algorithm)
// marks as removed from the old version and added in the new one. That is
// not always the least possible: before searching, xdiff drops lines with
// no match on the other side and, among them, lines that match too often
// (blank lines, closing braces) amid a run of such dropped lines; it marks
// those changed. lineDiff does the same, then finds the least edit on what
// is left, which is what xdiff finds as long as its heuristics for costly
// diffs stay off: they start at an edit cost of 256 (XDL_HEUR_MIN_COST,
// XDL_MAX_COST_MIN). Past maxEdit lineDiff says it cannot be sure, and the
// caller asks git.

// maxEdit is the largest edit, in lines, lineDiff answers for: below
// xdiff's heuristic threshold with room to spare.
const maxEdit = 255

// Constants of xdiff's preparation (xprepare.c).
const (
	xdlMaxEqLimit     = 1024 // XDL_MAX_EQLIMIT
	xdlSimscanWindow  = 100  // XDL_SIMSCAN_WINDOW
	xdlKeepDiscardRun = 4    // XDL_KPDIS_RUN
)

// lineDiff counts the lines b adds to a and removes from it. Lines are
// compared by their bytes, newline included, so a last line without one
// differs from the same line with one. ok is false when the edit is
// larger than maxEdit.
func lineDiff(a, b []byte) (added, removed int, ok bool) {
	classes := map[string]int32{}
	la, lb := classify(a, classes), classify(b, classes)

	// Common first and last lines are never changed (xdl_trim_ends).
	start := 0
	for start < len(la) && start < len(lb) && la[start] == lb[start] {
		start++
	}
	endA, endB := len(la), len(lb)
	for endA > start && endB > start && la[endA-1] == lb[endB-1] {
		endA--
		endB--
	}

	// Lines dropped before the search (xdl_cleanup_records): they count as
	// changed whatever the search would have matched them with.
	countA, countB := make([]int, len(classes)), make([]int, len(classes))
	for _, c := range la {
		countA[c]++
	}
	for _, c := range lb {
		countB[c]++
	}
	keptA, droppedA := keep(la, start, endA, countB)
	keptB, droppedB := keep(lb, start, endB, countA)

	d, ok := editDistance(keptA, keptB, maxEdit)
	if !ok {
		return 0, 0, false
	}
	common := (len(keptA) + len(keptB) - d) / 2
	return droppedB + len(keptB) - common, droppedA + len(keptA) - common, true
}

// classify splits text into lines (each with its newline; the last one
// may have none) and names each distinct line by a small number.
func classify(text []byte, classes map[string]int32) []int32 {
	var out []int32
	for len(text) > 0 {
		n := 0
		for n < len(text) && text[n] != '\n' {
			n++
		}
		if n < len(text) {
			n++
		}
		c, ok := classes[string(text[:n])]
		if !ok {
			c = int32(len(classes))
			classes[string(text[:n])] = c
		}
		out = append(out, c)
		text = text[n:]
	}
	return out
}

// keep returns the lines of l[start:end] the search works on and how many
// were dropped. other counts each line's occurrences in the whole other
// version. A line is dropped when it has no match there, or when it has
// too many (at least the square-root-ish limit xdiff computes from the
// version's length) and sits amid a run of lines without a match.
func keep(l []int32, start, end int, other []int) ([]int32, int) {
	limit := min(bogosqrt(len(l)), xdlMaxEqLimit)
	dis := make([]byte, len(l))
	for i := start; i < end; i++ {
		switch nm := other[l[i]]; {
		case nm == 0:
			dis[i] = 0
		case nm >= limit:
			dis[i] = 2
		default:
			dis[i] = 1
		}
	}
	var kept []int32
	dropped := 0
	for i := start; i < end; i++ {
		if dis[i] == 1 || dis[i] == 2 && !cleanMultiMatch(dis, i, start, end-1) {
			kept = append(kept, l[i])
		} else {
			dropped++
		}
	}
	return kept, dropped
}

// bogosqrt is xdiff's cheap square root: the power of two past sqrt(n).
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// cleanMultiMatch is xdl_clean_mmatch: whether the often-matching line i
// is to be dropped, because the lines around it (within [s, e], and a
// window of 100) have no match or match often, and enough of them have
// none.
func cleanMultiMatch(dis []byte, i, s, e int) bool {
	if i-s > xdlSimscanWindow {
		s = i - xdlSimscanWindow
	}
	if e-i > xdlSimscanWindow {
		e = i + xdlSimscanWindow
	}
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*xdlKeepDiscardRun < rpdis1+rdis1
}

// editDistance is the least number of lines to delete from a and insert
// into b to turn one into the other (Myers' O(ND) greedy search), or
// ok=false when that is more than maxD.
func editDistance(a, b []int32, maxD int) (d int, ok bool) {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return n + m, n+m <= maxD
	}
	// v[off+k] is how far along a the furthest path on diagonal k (x-y)
	// reaches with the current number of edits.
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1] // an insertion: down from diagonal k+1
			} else {
				x = v[off+k-1] + 1 // a deletion: right from diagonal k-1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return d, true
			}
		}
	}
	return 0, false
}
