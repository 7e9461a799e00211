package jsonscan

// Helpers for the readers of the agents' formats, which look at one or two
// members of a value they were handed raw and at nothing else.

// ValidObject reports whether b is one object and nothing after it, judged
// as a reader that skips every member would judge it: strict on the
// members' names and separators, lenient inside their values (as Skip is).
func ValidObject(b []byte) bool {
	s := New(b)
	return s.Object(func([]byte) error { return nil }) == nil && s.AtEnd()
}

// StringMember is the member called name of the raw object, when it is a
// string (the last such member, if there are several); "" otherwise.
func StringMember(raw []byte, name string) string {
	var out string
	if len(raw) == 0 {
		return ""
	}
	s := New(raw)
	if s.Peek() != Object {
		return ""
	}
	_ = s.Object(func(k []byte) error {
		if string(k) == name && s.Peek() == String {
			out, _ = s.String()
		}
		return nil
	})
	return out
}

// StringValue is the raw value decoded when it is a string; ok is false
// for any other kind of value.
func StringValue(raw []byte) (str string, ok bool) {
	if s := New(raw); s.Peek() == String {
		str, _ = s.String()
		return str, true
	}
	return "", false
}

// NumberMember is the member called name of the raw object read as a
// number (see Number); 0 when there is none.
func NumberMember(raw []byte, name string) float64 {
	var out float64
	s := New(raw)
	if s.Peek() != Object {
		return 0
	}
	_ = s.Object(func(k []byte) error {
		if string(k) == name {
			out, _ = s.Number()
		}
		return nil
	})
	return out
}

// EachObject calls fn for every object element of a raw array, with the
// scanner at the element; fn must consume it.
func EachObject(raw []byte, fn func(s *Scanner)) {
	if len(raw) == 0 {
		return
	}
	s := New(raw)
	if s.Peek() != Array {
		return
	}
	_ = s.Array(func(int) error {
		if s.Peek() == Object {
			fn(s)
		}
		return nil
	})
}

// EachString calls fn for every string element of a raw array.
func EachString(raw []byte, fn func(string)) {
	if len(raw) == 0 {
		return
	}
	s := New(raw)
	if s.Peek() != Array {
		return
	}
	_ = s.Array(func(int) error {
		if s.Peek() == String {
			t, err := s.String()
			fn(t)
			return err
		}
		return s.Skip()
	})
}

// LooseString consumes the next value as Skip does and returns it decoded
// when it is a string that decodes, "" otherwise: for a member some
// readers of a value need and others do not, which must not make the
// value fail for the others.
func (s *Scanner) LooseString() (string, error) {
	raw, err := s.Raw()
	if err != nil || len(raw) == 0 || raw[0] != '"' {
		return "", err
	}
	str, _ := New(raw).String()
	return str, nil
}

// LooseNumber is LooseString for a number (read as Number reads one).
func (s *Scanner) LooseNumber() (float64, error) {
	raw, err := s.Raw()
	if err != nil || len(raw) == 0 || raw[0] == '{' || raw[0] == '[' {
		return 0, err
	}
	f, _ := New(raw).Number()
	return f, nil
}

// Member is the raw value of the member called name of the raw object (the
// last one, if there are several); nil when there is none.
func Member(raw []byte, name string) []byte {
	var out []byte
	s := New(raw)
	if s.Peek() != Object {
		return nil
	}
	_ = s.Object(func(k []byte) error {
		if string(k) == name {
			out, _ = s.Raw()
		}
		return nil
	})
	return out
}
