package redact

import "bytes"

// Stream masks the known secret values of text that arrives in pieces, as
// an agent's output comes out of its pipe, by value only: the text keeps
// its form (a JSON line stays a JSON line), and nothing but the secrets
// changes. A secret split across two pieces is masked whole: Next passes
// on a piece but for its end when that end could be the start of a
// secret, which it holds (never more than the longest secret) until the
// next piece or End shows what it is.
//
// Values made only of digits and the punctuation of times are left alone,
// as JSON does: one inside a JSON number would turn the agent's output
// into something the analysis cannot read. The zero Stream is ready; it is
// not safe for concurrent use.
type Stream struct{ held []byte }

// Next returns the masked text that may be passed on now; it may share p's
// memory, so use it before p changes.
func (s *Stream) Next(p []byte) []byte {
	buf := p
	if len(s.held) > 0 {
		buf = append(append(make([]byte, 0, len(s.held)+len(p)), s.held...), p...)
	}
	known.RLock()
	defer known.RUnlock()
	cut := safeCut(buf)
	out := maskKnown(buf[:cut], false)
	s.held = append(s.held[:0], buf[cut:]...)
	return out
}

// End returns what is held, masked: the text ended.
func (s *Stream) End() []byte {
	known.RLock()
	defer known.RUnlock()
	out := maskKnown(append([]byte(nil), s.held...), false)
	s.held = s.held[:0]
	return out
}

// safeCut is where buf may be cut so that no known value is split: before
// a tail that may be the start of one, and before any value the cut would
// go through. known is read-locked.
func safeCut(buf []byte) int {
	cut := len(buf)
	for _, kb := range known.bytes {
		if kb.number {
			continue
		}
		if k := partialTail(buf, kb.v); len(buf)-k < cut {
			cut = len(buf) - k
		}
	}
	if cut == len(buf) {
		return cut
	}
	// A whole value may end right at the end of buf while a shorter tail
	// starts another: the cut must not go through the first. Every match
	// of v in the window below crosses the cut.
	for moved := true; moved; {
		moved = false
		for _, kb := range known.bytes {
			v := kb.v
			if kb.number {
				continue
			}
			lo, hi := max(0, cut-len(v)+1), min(len(buf), cut+len(v)-1)
			if lo >= hi {
				continue
			}
			if i := bytes.Index(buf[lo:hi], v); i >= 0 {
				cut, moved = lo+i, true
			}
		}
	}
	return cut
}

// partialTail is the length of the longest tail of buf that is a proper
// beginning of v (0 for none).
func partialTail(buf, v []byte) int {
	from := max(0, len(buf)-len(v)+1)
	for from < len(buf) {
		i := bytes.IndexByte(buf[from:], v[0])
		if i < 0 {
			return 0
		}
		if bytes.HasPrefix(v, buf[from+i:]) {
			return len(buf) - from - i
		}
		from += i + 1
	}
	return 0
}

// ValuesBytes is Values for bytes: b itself when nothing is masked.
func ValuesBytes(b []byte) []byte {
	known.RLock()
	defer known.RUnlock()
	return maskKnown(b, true)
}

// maskKnown masks the known values in b, longest first, numbers only if
// numbers is set; known is read-locked. b is returned itself when nothing
// is masked.
func maskKnown(b []byte, numbers bool) []byte {
	for _, kb := range known.bytes {
		if (numbers || !kb.number) && bytes.Contains(b, kb.v) {
			b = bytes.ReplaceAll(b, kb.v, []byte(Mask))
		}
	}
	return b
}
