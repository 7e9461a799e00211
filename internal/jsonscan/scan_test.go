package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

func TestWalk(t *testing.T) {
	in := `{"type":"assistant","n":-1.5e3,"ok":true,"nil":null,"s":"a\"b\\\\","u":"\u00e9\ud83d\ude00",` +
		`"big":{"x":[1,{"y":"}]"}],"z":"\\"},"arr":[1,"two",{"three":3}]}`
	s := New([]byte(in))
	got := map[string]any{}
	err := s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "type", "s", "u":
			got[string(k)], err = s.String()
		case "n":
			got["n"], err = s.Number()
		case "ok":
			got["ok"], err = s.Bool()
		case "nil":
			got["nil"], err = s.String()
		case "arr":
			n := 0
			err = s.Array(func(int) error { n++; return nil }) // elements left unread are skipped
			got["arr"] = n
		}
		return err // "big" is not consumed: the scanner skips it
	})
	if err != nil || !s.AtEnd() {
		t.Fatalf("walk: %v (at end %v)", err, s.AtEnd())
	}
	want := map[string]any{"type": "assistant", "n": -1500.0, "ok": true, "nil": "", "s": `a"b\\`, "u": "é😀", "arr": 3}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, in := range []string{`{`, `{"a"}`, `{"a":1,}`, `{"a":1 "b":2}`, `{ invalid }`, `{"a":"x}`, `{"a":[1,2}`, `{"a":tru}`, `]`, `{"a":1}}`} {
		s := New([]byte(in))
		err := s.Object(func([]byte) error { return nil })
		if err == nil && s.AtEnd() {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestSkipLargeStrings(t *testing.T) {
	// Backslashes before a quote decide whether it ends the string.
	for _, tc := range []struct {
		in   string
		rest string
	}{
		{`"abc" x`, " x"},
		{`"a\"b" x`, " x"},
		{`"a\\" x`, " x"},
		{`"a\\\"b" x`, " x"},
		{`{"k":"v\\"} x`, " x"},
	} {
		s := New([]byte(tc.in))
		if err := s.Skip(); err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := tc.in[s.Offset():]; got != tc.rest {
			t.Errorf("%q: rest %q, want %q", tc.in, got, tc.rest)
		}
	}
}

// FuzzScanner: never panics; every document encoding/json accepts is walked
// to its end, and its strings decode as encoding/json decodes them.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `[1,2,{"x":null}]`, `{"a":"\u00e9\n"}`, `"\ud800"`, `{"a":{"b":[true,false]}}`, `{`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s := New(in)
		var walk func() error
		walk = func() error {
			switch s.Peek() {
			case Object:
				return s.Object(func([]byte) error { return walk() })
			case Array:
				return s.Array(func(int) error { return walk() })
			case String:
				_, err := s.String()
				return err
			default:
				return s.Skip()
			}
		}
		err := walk()
		if !json.Valid(in) {
			return
		}
		if err != nil || !s.AtEnd() {
			t.Fatalf("valid JSON %q not walked: %v", in, err)
		}
		var want string
		if json.Unmarshal(in, &want) == nil {
			got, err := New(in).String()
			if err != nil || got != want {
				t.Fatalf("String(%q) = %q, %v; want %q", in, got, err, want)
			}
		}
	})
}

// FuzzVariants: AppendString reads what String reads, and RawFind consumes
// what Raw consumes, on any input.
func FuzzVariants(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `{"k":[{"k":true}],"x":"\u00e9"}`, `{"a":"x\"k\":1"}`, "\"\xff\"", `[`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b := New(in), New(in)
		want, werr := a.String()
		got, gerr := b.AppendString(nil)
		if string(got) != want || (werr == nil) != (gerr == nil) || a.Offset() != b.Offset() {
			t.Fatalf("AppendString(%q) = %q %v at %d, String %q %v at %d", in, got, gerr, b.Offset(), want, werr, a.Offset())
		}
		a, b = New(in), New(in)
		raw, rerr := a.Raw()
		fraw, _, ferr := b.RawFind("k", func(byte) bool { return true })
		if string(raw) != string(fraw) || (rerr == nil) != (ferr == nil) || a.Offset() != b.Offset() {
			t.Fatalf("RawFind(%q) = %q %v, Raw %q %v", in, fraw, ferr, raw, rerr)
		}
	})
}

// AppendString decodes as String does, after what dst held, and leaves the
// scanner where String leaves it.
func TestAppendStringAsString(t *testing.T) {
	for _, in := range []string{`"plain"`, `""`, `null`, `"a\"b\\c\n\t\u00e9\ud83d\ude00"`, `"\ud800 lone"`, `"bad \x escape"`,
		`"short \u12"`, "\"invalid \xff\xfe utf8\"", "\"esc \\n and \xc3\"", `42`, `{"a":1}`, `"unterminated`, `tru`, `"\\"`} {
		for _, prefix := range []string{"", "kept:"} {
			a, b := New([]byte(in+` ,`)), New([]byte(in+` ,`))
			want, werr := a.String()
			got, gerr := b.AppendString([]byte(prefix))
			if string(got) != prefix+want || (werr == nil) != (gerr == nil) || a.Offset() != b.Offset() {
				t.Errorf("%s after %q: %q %v at %d, String gives %q %v at %d", in, prefix, got, gerr, b.Offset(), want, werr, a.Offset())
			}
		}
	}
}

// RawFind consumes what Raw consumes and finds a member by name at any depth,
// never inside a string.
func TestRawFind(t *testing.T) {
	notFalse := func(b byte) bool { return b != 'f' }
	for in, want := range map[string]bool{
		`{"a":[{"k":true}]}`:            true,
		`{"a":[{"k" :	 1}]}`:            true,
		`{"a":[{"k":false}]}`:           false,
		`{"a":[{"k":false},{"k":"x"}]}`: true,
		`{"a":"{\"k\":true}"}`:          false,
		`{"a":["k"]}`:                   false,
		`{"k":{"b":1}}`:                 true,
		`"k"`:                           false,
		`[1,2]`:                         false,
	} {
		a, b := New([]byte(in+" x")), New([]byte(in+" x"))
		raw, _ := a.Raw()
		got, found, err := b.RawFind("k", notFalse)
		if err != nil || string(got) != string(raw) || found != want || a.Offset() != b.Offset() {
			t.Errorf("RawFind(%s) = %s %v %v, want %s %v", in, got, found, err, raw, want)
		}
	}
	if _, _, err := New([]byte(`{"a":[`)).RawFind("k", notFalse); err == nil {
		t.Error("RawFind of an unterminated value: no error")
	}
}

// Integers read without ParseFloat read as ParseFloat reads them.
func TestNumberIntegers(t *testing.T) {
	for _, in := range []string{"0", "7", "42", "007", "123456789012345", "1234567890123456", "-3", "1.5", "1e3", "99999999999999999999"} {
		got, err := New([]byte(in)).Number()
		want, werr := strconv.ParseFloat(in, 64)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("Number(%s) = %v %v, ParseFloat %v %v", in, got, err, want, werr)
		}
	}
}

// indexQuote finds what bytes.IndexByte finds, wherever the quote is and
// whatever surrounds it (bytes that borrow in the word arithmetic: 0x00,
// 0x01, 0x21, 0x23, 0x80, 0xa2, 0xff).
func TestIndexQuote(t *testing.T) {
	for n := 0; n < 40; n++ {
		for _, fill := range []byte{'a', 0x00, 0x01, 0x21, 0x23, 0x80, 0xa2, 0xff} {
			b := bytes.Repeat([]byte{fill}, n)
			if got, want := indexQuote(b), bytes.IndexByte(b, '"'); got != want {
				t.Fatalf("indexQuote(%x) = %d, want %d", b, got, want)
			}
			for q := 0; q < n; q++ {
				for q2 := q; q2 < n; q2 += 5 {
					c := append([]byte(nil), b...)
					c[q2] = '"'
					c[q] = '"'
					if got := indexQuote(c); got != q {
						t.Fatalf("indexQuote(%x) = %d, want %d", c, got, q)
					}
				}
			}
		}
	}
}
