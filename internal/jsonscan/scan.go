// Package jsonscan is a small pull scanner over one JSON value held in memory.
//
// The analyzer reads transcripts in which almost every byte belongs to values
// it does not need (tool output, file contents). encoding/json would decode or
// at least validate all of them; this scanner lets the caller pick the few keys
// it wants and skip the rest with a byte search, which is what keeps the
// analyzer several times faster than a jq pass over the same file.
//
// It is lenient inside skipped values (it checks bracket balance and string
// termination, not every comma) and strict on the path the caller walks.
package jsonscan

import (
	"errors"
	"strconv"
)

// Kind is the type of the next value, judged from its first byte.
type Kind int

// Value kinds.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	Bool
	Null
	End // nothing but whitespace remains
)

// ErrSyntax is returned (wrapped) for malformed input.
var ErrSyntax = errors.New("jsonscan: syntax error")

// Scanner walks one JSON document. The zero value is not usable; call New.
type Scanner struct {
	b   []byte
	i   int
	err error
}

// New returns a scanner over b. b must not change while the scanner is used.
func New(b []byte) *Scanner { return &Scanner{b: b} }

// Err reports the first syntax error met.
func (s *Scanner) Err() error { return s.err }

// Offset is the position of the next unread byte.
func (s *Scanner) Offset() int { return s.i }

func (s *Scanner) fail() error {
	if s.err == nil {
		s.err = ErrSyntax
	}
	s.i = len(s.b)
	return s.err
}

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Peek reports the kind of the next value without consuming it.
func (s *Scanner) Peek() Kind {
	if s.err != nil {
		return Invalid
	}
	s.ws()
	if s.i >= len(s.b) {
		return End
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == 't' || c == 'f':
		return Bool
	case c == 'n':
		return Null
	case c == '-' || (c >= '0' && c <= '9'):
		return Number
	}
	return Invalid
}

// AtEnd reports whether only whitespace remains.
func (s *Scanner) AtEnd() bool { return s.Peek() == End }

// Object iterates the members of an object. fn receives each key (raw bytes,
// valid only during the call) and must consume the member's value with one of
// the scanner's methods. A non-nil error from fn stops the walk and is returned.
func (s *Scanner) Object(fn func(key []byte) error) error {
	if s.Peek() != Object {
		return s.fail()
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.fail()
		}
		key, ok := s.rawString()
		if !ok {
			return s.fail()
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.fail()
		}
		s.i++
		start := s.i
		if err := fn(key); err != nil {
			return err
		}
		if s.err != nil {
			return s.err
		}
		if s.i == start { // fn ignored the value: skip it for the caller
			if err := s.Skip(); err != nil {
				return err
			}
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail()
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail()
		}
	}
}

// Array iterates the elements of an array; fn must consume each element.
func (s *Scanner) Array(fn func(i int) error) error {
	if s.Peek() != Array {
		return s.fail()
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		s.ws()
		start := s.i
		if err := fn(n); err != nil {
			return err
		}
		if s.err != nil {
			return s.err
		}
		if s.i == start {
			if err := s.Skip(); err != nil {
				return err
			}
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail()
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail()
		}
	}
}

// Number consumes a number and returns it. A null reads as 0; a numeric
// string ("42") is accepted because some writers quote numbers.
func (s *Scanner) Number() (float64, error) {
	switch s.Peek() {
	case Number:
		tok := s.token()
		if f, ok := smallInt(tok); ok {
			return f, nil
		}
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return 0, s.fail()
		}
		return f, nil
	case String:
		str, err := s.String()
		if err != nil {
			return 0, err
		}
		f, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return 0, nil
		}
		return f, nil
	case Null, Bool:
		return 0, s.Skip()
	}
	return 0, s.fail()
}

// smallInt reads a token of one to 15 digits, the common case of a count,
// exactly as ParseFloat would (such an integer is a float64 exactly).
func smallInt(tok []byte) (float64, bool) {
	if len(tok) == 0 || len(tok) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return float64(n), true
}

// Bool consumes a boolean. Strings "true"/"false" (any case) are accepted;
// null and anything else read as false.
func (s *Scanner) Bool() (bool, error) {
	switch s.Peek() {
	case Bool:
		tok := s.token()
		switch string(tok) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, s.fail()
	case String:
		str, err := s.String()
		return str == "true" || str == "True" || str == "TRUE", err
	}
	return false, s.Skip()
}

// token consumes a bare literal or number.
func (s *Scanner) token() []byte {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == ':' {
			break
		}
		s.i++
	}
	return s.b[start:s.i]
}

// Raw consumes the next value and returns its bytes.
func (s *Scanner) Raw() ([]byte, error) {
	s.ws()
	start := s.i
	if err := s.Skip(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

// RawFind is Raw that also reports whether an object member named name (its
// raw bytes between the quotes) stands anywhere inside the value, with a
// value whose first byte want accepts. It costs Raw's one pass: a caller
// that needs a member deep inside only when it has some value learns
// whether to walk the value again.
func (s *Scanner) RawFind(name string, want func(first byte) bool) (raw []byte, found bool, err error) {
	s.ws()
	start := s.i
	switch s.Peek() {
	case Object, Array:
		found, err = s.skipFinding(name, want)
	default:
		err = s.Skip()
	}
	if err != nil {
		return nil, false, err
	}
	return s.b[start:s.i], found, nil
}

// Skip consumes the next value whatever it is.
func (s *Scanner) Skip() error {
	switch s.Peek() {
	case String:
		if _, ok := s.rawString(); !ok {
			return s.fail()
		}
		return nil
	case Number, Bool, Null:
		tok := s.token()
		if len(tok) == 0 {
			return s.fail()
		}
		switch tok[0] {
		case 't':
			if string(tok) != "true" {
				return s.fail()
			}
		case 'f':
			if string(tok) != "false" {
				return s.fail()
			}
		case 'n':
			if string(tok) != "null" {
				return s.fail()
			}
		}
		return nil
	case Object, Array:
		return s.skipContainer()
	}
	return s.fail()
}

// skipContainer skips a balanced object or array, jumping over strings with
// a byte search: this is the hot path for large tool outputs.
func (s *Scanner) skipContainer() error {
	_, err := s.skipFinding("", nil)
	return err
}

// skipFinding is skipContainer that, given a want, looks at each string
// named name for a colon and the value after it (see RawFind).
func (s *Scanner) skipFinding(name string, want func(byte) bool) (found bool, err error) {
	depth := 0
	b := s.b
	for i := s.i; i < len(b); {
		c := b[i]
		switch c {
		case '"':
			s.i = i
			str, ok := s.rawString()
			if !ok {
				return false, s.fail()
			}
			i = s.i
			if want != nil && !found && len(str) == len(name) && string(str) == name {
				found = s.memberValue(want)
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i = i + 1
				return found, nil
			}
			if depth < 0 {
				return false, s.fail()
			}
		}
		i++
	}
	return false, s.fail()
}

// memberValue reports whether a colon follows s.i (after whitespace), then
// a value whose first byte want accepts. It consumes nothing.
func (s *Scanner) memberValue(want func(byte) bool) bool {
	j := s.i
	for j < len(s.b) && isWS(s.b[j]) {
		j++
	}
	if j >= len(s.b) || s.b[j] != ':' {
		return false
	}
	for j++; j < len(s.b) && isWS(s.b[j]); j++ {
	}
	return j < len(s.b) && want(s.b[j])
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
