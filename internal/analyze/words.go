package analyze

import (
	"encoding/binary"
	"strings"
	"unsafe"
)

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

	// Literals around a keyword, judged where the pass finds it (litAt):
	// litJSONKey, a key `"error…`, `"is_error…` or `"has_error…` (what
	// jsonErrorKey cannot match without); litErrorAny, one of errorAny's
	// literals; litQuota, "exceeded your current quota" or "quota
	// exceeded" in any case. litNonASCII: the line has a byte >= 0x80.
	litJSONKey
	litErrorAny
	litQuota
	litNonASCII

	// errorKw: a line without any of these is not read for errors.
	errorKw = kwErr | kwFatal | kwException | kwFail | kwPanic | kwTraceback | kwSegmentation | kwNotFound | kwCausedBy
	// limitKw: a line without any of these is not read for usage limits.
	limitKw = kwLimit | kwUsage | kwQuota | kw429 | kwResourceExhausted
)

// hotWords are the keywords above, in the order of their bits, lower case.
// The words with literals around them are looked at wherever they occur.
var hotWords = newWordSet(litAt, kwErr|kwFatal|kwException|kwPanic|kwTraceback|kwSegmentation|kwNotFound|kwQuota, "err", "fatal", "exception", "fail", "panic", "traceback", "segmentation",
	"not found", "caused by", "limit", "usage", "quota", "429", "resource_exhausted")

// litAt returns the literal bits of the hot word k found at s[p:].
func litAt(s string, p, k int) uint32 {
	rest := s[p:]
	switch 1 << k {
	case kwErr:
		switch {
		case strings.HasPrefix(rest, "error"):
			before := s[:p]
			var m uint32
			if strings.HasSuffix(before, `"`) || strings.HasSuffix(before, `"is_`) || strings.HasSuffix(before, `"has_`) {
				m |= litJSONKey
			}
			if strings.HasSuffix(before, "]: ") || strings.HasSuffix(before, "Link: ") || strings.HasSuffix(before, "failed with ") || strings.HasPrefix(rest[5:], " TS") {
				m |= litErrorAny
			}
			return m
		case strings.HasPrefix(rest, "ERR!") && strings.HasSuffix(s[:p], "npm "),
			strings.HasPrefix(rest, "Error occurred"):
			return litErrorAny
		}
	case kwSegmentation:
		if strings.HasPrefix(rest, "Segmentation fault") {
			return litErrorAny
		}
	case kwNotFound:
		if strings.HasPrefix(rest, "not found") && strings.HasSuffix(s[:p], "command ") {
			return litErrorAny
		}
	case kwPanic:
		if strings.HasPrefix(rest, "panic: ") {
			return litErrorAny
		}
	case kwFatal:
		if strings.HasPrefix(rest, "Fatal") || strings.HasPrefix(rest, "FATAL") {
			return litErrorAny
		}
	case kwException:
		if strings.HasPrefix(rest, "Exception: ") {
			return litErrorAny
		}
	case kwTraceback:
		if strings.HasPrefix(rest, "Traceback (most recent call last)") {
			return litErrorAny
		}
	case kwQuota:
		if hasLowerPrefix(rest, "quota exceeded") || (p >= 22 && hasLowerPrefix(s[p-22:], "exceeded your current quota")) {
			return litQuota
		}
	}
	return 0
}

// wordSet finds which of up to 16 words (lower case, at least three bytes)
// occur in a text, ignoring ASCII case, and what lit says of the literals
// around them. A hashed table of three-byte pieces of the words is the
// filter, tried at every second position of the text: a word of length
// four or more at position p holds the piece at p (its first three bytes)
// or at p+1 (its bytes 1 to 3), whichever of them is even; a three-byte word
// at an odd p is found by its last two bytes followed by any byte. Most
// positions miss the filter at the cost of one lookup; the others look the
// piece up among the words' (pieces) and check the words it may start.
type wordSet struct {
	words  []string
	lit    func(s string, p, k int) uint32
	every  uint32          // the words lit is asked about at every occurrence
	filter [1 << 10]uint64 // 1<<16 bits, indexed by triHash
	// pieces is an open-addressing table of the words' exact pieces, by
	// triHash's low bits; short holds the three-byte words' last two bytes.
	pieces [64]piece
	short  []piece
}

// piece: the folded bytes t are those of word k from its byte off (0 or 1).
type piece struct {
	t      uint32
	k, off uint8
	used   bool
}

func newWordSet(lit func(s string, p, k int) uint32, every uint32, words ...string) *wordSet {
	w := &wordSet{words: words, lit: lit, every: every}
	if len(words) > 16 {
		panic("wordSet: at most 16 words")
	}
	for k, s := range words {
		if len(s) < 3 {
			panic("wordSet: words of at least 3 bytes")
		}
		w.add(piece{t: fold3(s[0], s[1], s[2]), k: uint8(k)})
		if len(s) >= 4 {
			w.add(piece{t: fold3(s[1], s[2], s[3]), k: uint8(k), off: 1})
			continue
		}
		w.short = append(w.short, piece{t: fold3(s[1], s[2], 0) & 0xffff, k: uint8(k), off: 1})
		for c := 0; c < 256; c++ {
			h := triHash(fold3(s[1], s[2], byte(c)))
			w.filter[h>>6] |= 1 << (h & 63)
		}
	}
	return w
}

func (w *wordSet) add(p piece) {
	h := triHash(p.t)
	w.filter[h>>6] |= 1 << (h & 63)
	p.used = true
	for j := h; ; j++ {
		if !w.pieces[j%64].used {
			w.pieces[j%64] = p
			return
		}
	}
}

// fold3 packs three bytes with ASCII letters folded to lower case (other
// bytes may collide, which the check after the filter sorts out).
func fold3(a, b, c byte) uint32 {
	return uint32(a|0x20) | uint32(b|0x20)<<8 | uint32(c|0x20)<<16
}

func triHash(t uint32) uint32 { return (t * 0x9E3779B1) >> 16 }

// mask returns the bits (1<<index) of the words that occur in s, with the
// literal bits lit finds around them and litNonASCII.
func (w *wordSet) mask(s string) uint32 {
	var m uint32
	var high uint64
	// b is s's bytes, only read: eight-byte loads of a string.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	i := 0
	for ; i+8 <= len(b); i += 6 {
		v := binary.LittleEndian.Uint64(b[i : i+8 : i+8])
		high |= v
		f := v | 0x2020202020202020
		h0 := triHash(uint32(f) & 0xffffff)
		h2 := triHash(uint32(f>>16) & 0xffffff)
		h4 := triHash(uint32(f>>32) & 0xffffff)
		if (w.filter[h0>>6&1023]>>(h0&63)|w.filter[h2>>6&1023]>>(h2&63)|w.filter[h4>>6&1023]>>(h4&63))&1 != 0 {
			m = w.check6(s, i, f, m)
		}
	}
	if i < len(b) {
		// The last bytes, padded with zeros (spaces once folded): the
		// words are checked in s itself.
		var pad [16]byte
		copy(pad[:], b[i:])
		v := binary.LittleEndian.Uint64(pad[:])
		high |= v | binary.LittleEndian.Uint64(pad[8:])
		for j := 0; i+j < len(b); j += 2 {
			t := fold3(pad[j], pad[j+1], pad[j+2])
			if h := triHash(t); w.filter[(h>>6)&1023]&(1<<(h&63)) != 0 {
				m = w.check(s, i+j, t, h, m)
			}
		}
	}
	if high&0x8080808080808080 != 0 {
		m |= litNonASCII
	}
	return m
}

// check6 checks the three positions of f (folded s[i:i+8]) the filter may
// have passed.
func (w *wordSet) check6(s string, i int, f uint64, m uint32) uint32 {
	for j := 0; j < 6; j += 2 {
		t := uint32(f>>(8*j)) & 0xffffff
		if h := triHash(t); w.filter[(h>>6)&1023]&(1<<(h&63)) != 0 {
			m = w.check(s, i+j, t, h, m)
		}
	}
	return m
}

// check tries the words at s[i:] and s[i-1:] whose piece t (hashed: h) may
// be.
func (w *wordSet) check(s string, i int, t, h, m uint32) uint32 {
	for j := h; ; j++ {
		p := &w.pieces[j%64]
		if !p.used {
			break
		}
		if p.t == t && i >= int(p.off) {
			m = w.found(s, i-int(p.off), int(p.k), m)
		}
	}
	for _, p := range w.short {
		if p.t == t&0xffff && i >= 1 {
			m = w.found(s, i-1, int(p.k), m)
		}
	}
	return m
}

// found checks word k at s[p:] and returns m with its bits.
func (w *wordSet) found(s string, p, k int, m uint32) uint32 {
	if m&(1<<k) != 0 && w.every&(1<<k) == 0 {
		return m
	}
	if !hasLowerPrefix(s[p:], w.words[k]) {
		return m
	}
	m |= 1 << k
	if w.lit != nil {
		m |= w.lit(s, p, k)
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
