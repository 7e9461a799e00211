package analyze

// Keywords of the per-line checks over every message of the agent, found in
// one pass over the line (wordSet.mask) instead of one substring search per
// word: a long session's prose is read once, and only the lines holding a
// keyword go on to the patterns that need it.
const (
	kwErr = 1 << iota
	kwFatal
	kwException
	kwFail
	kwPanic
	kwTraceback
	kwSegmentation
	kwNotFound
	kwCausedBy
	kwLimit
	kwUsage
	kwQuota
	kw429
	kwResourceExhausted

	// errorKw: a line without any of these is not read for errors.
	errorKw = kwErr | kwFatal | kwException | kwFail | kwPanic | kwTraceback | kwSegmentation | kwNotFound | kwCausedBy
	// limitKw: a line without any of these is not read for usage limits.
	limitKw = kwLimit | kwUsage | kwQuota | kw429 | kwResourceExhausted
)

// hotWords are the keywords above, in the order of their bits, lower case.
var hotWords = newWordSet("err", "fatal", "exception", "fail", "panic", "traceback", "segmentation",
	"not found", "caused by", "limit", "usage", "quota", "429", "resource_exhausted")

// wordSet finds which of up to 32 words (lower case, at least three bytes)
// occur in a text, ignoring ASCII case. A hashed table of the words' first
// three bytes is the filter: most positions of a text miss it at the cost
// of one lookup, the others are checked against the words.
type wordSet struct {
	words  []string
	tri    []uint32
	filter [1 << 10]uint64 // 1<<16 bits, indexed by triHash
}

func newWordSet(words ...string) *wordSet {
	w := &wordSet{words: words}
	for _, s := range words {
		if len(s) < 3 || len(words) > 32 {
			panic("wordSet: words of at least 3 bytes, at most 32 words")
		}
		t := fold3(s[0], s[1], s[2])
		w.tri = append(w.tri, t)
		h := triHash(t)
		w.filter[h>>6] |= 1 << (h & 63)
	}
	return w
}

// fold3 packs three bytes with ASCII letters folded to lower case (other
// bytes may collide, which the check after the filter sorts out).
func fold3(a, b, c byte) uint32 {
	return uint32(a|0x20) | uint32(b|0x20)<<8 | uint32(c|0x20)<<16
}

func triHash(t uint32) uint32 { return (t * 0x9E3779B1) >> 16 }

// mask returns the bits (1<<index) of the words that occur in s.
func (w *wordSet) mask(s string) uint32 {
	var m uint32
	if len(s) < 3 {
		return 0
	}
	t := fold3(0, s[0], s[1]) // the loop shifts the first byte out
	for i := 2; i < len(s); i++ {
		t = t>>8 | uint32(s[i]|0x20)<<16 // s[i-2:i+1], folded
		h := triHash(t)
		if w.filter[(h>>6)&1023]&(1<<(h&63)) == 0 {
			continue
		}
		for k, kt := range w.tri {
			if kt == t && m&(1<<k) == 0 && hasLowerPrefix(s[i-2:], w.words[k]) {
				m |= 1 << k
			}
		}
	}
	return m
}

// hasLowerPrefix reports whether s starts with word (lower case) once its
// ASCII letters are lower-cased.
func hasLowerPrefix(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		ch := s[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != word[i] {
			return false
		}
	}
	return true
}
