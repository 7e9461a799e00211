package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// rawString consumes a string token and returns its bytes between the quotes,
// escapes untouched. s.i must be at the opening quote.
func (s *Scanner) rawString() ([]byte, bool) {
	b := s.b
	start := s.i + 1
	for j := start; ; j++ {
		k := indexQuote(b[j:])
		if k < 0 {
			return nil, false
		}
		j += k
		// An odd run of backslashes before the quote escapes it.
		bs := 0
		for p := j - 1; p >= start && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			s.i = j + 1
			return b[start:j], true
		}
	}
}

// indexQuote is bytes.IndexByte(b, '"'), looking at the first sixteen bytes
// a word at a time before it calls the vector search: inside text with
// escaped quotes (code, JSON held in a string) the next quote is often that
// near, and a call costs more than the look.
func indexQuote(b []byte) int {
	if len(b) >= 16 {
		if t := quoteBits(binary.LittleEndian.Uint64(b[:8:8])); t != 0 {
			return bits.TrailingZeros64(t) / 8
		}
		if t := quoteBits(binary.LittleEndian.Uint64(b[8:16:16])); t != 0 {
			return 8 + bits.TrailingZeros64(t)/8
		}
		if k := bytes.IndexByte(b[16:], '"'); k >= 0 {
			return 16 + k
		}
		return -1
	}
	return bytes.IndexByte(b, '"')
}

// quoteBits has the high bit of each byte of v that is '"' set, and
// perhaps of bytes after the first such one; none when v has no quote.
func quoteBits(v uint64) uint64 {
	x := v ^ 0x2222222222222222
	return (x - 0x0101010101010101) &^ x & 0x8080808080808080
}

// String consumes a string value and returns it decoded. A null reads as "".
func (s *Scanner) String() (string, error) {
	b, err := s.StringBytes()
	return string(b), err
}

// StringBytes is String without the final copy when the string has no escapes;
// the result then aliases the input and is valid as long as it is.
func (s *Scanner) StringBytes() ([]byte, error) {
	switch s.Peek() {
	case String:
	case Null:
		return nil, s.Skip()
	default:
		return nil, s.fail()
	}
	raw, ok := s.rawString()
	if !ok {
		return nil, s.fail()
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return validUTF8(raw), nil
	}
	out, ok := unescape(raw)
	if !ok {
		return nil, s.fail()
	}
	return validUTF8(out), nil
}

// AppendString consumes a string value and appends it, decoded, to dst, as
// String would return it: a caller that reuses dst decodes without
// allocating. On an error dst is returned as it was.
func (s *Scanner) AppendString(dst []byte) ([]byte, error) {
	switch s.Peek() {
	case String:
	case Null:
		return dst, s.Skip()
	default:
		return dst, s.fail()
	}
	raw, ok := s.rawString()
	if !ok {
		return dst, s.fail()
	}
	start := len(dst)
	if bytes.IndexByte(raw, '\\') < 0 {
		dst = append(dst, raw...)
	} else {
		out, ok := appendUnescaped(dst, raw)
		if !ok {
			return dst[:start], s.fail()
		}
		dst = out
	}
	if utf8.Valid(dst[start:]) {
		return dst, nil
	}
	fixed := validUTF8(dst[start:])
	return append(dst[:start], fixed...), nil
}

// validUTF8 replaces each invalid byte with U+FFFD, as encoding/json does,
// so text read here can be printed back as JSON unchanged.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

func unescape(raw []byte) ([]byte, bool) {
	return appendUnescaped(make([]byte, 0, len(raw)), raw)
}

// appendUnescaped appends raw's string contents, escapes decoded, to out.
func appendUnescaped(out, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			// Copy the run up to the next escape at once.
			k := bytes.IndexByte(raw[i:], '\\')
			if k < 0 {
				k = len(raw) - i
			}
			out = append(out, raw[i:i+k]...)
			i += k - 1
			continue
		}
		i++
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return nil, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if r2, ok := hex4(raw, i+3); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
							i += 6
						}
					}
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, false
		}
	}
	return out, true
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}
