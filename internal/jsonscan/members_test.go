package jsonscan

import "testing"

func TestMembers(t *testing.T) {
	obj := []byte(`{"a": "x", "n": 4, "a": "y", "e": {"message": "m"}, "s": ["p", 1, "q"]}`)
	if got := StringMember(obj, "a"); got != "y" {
		t.Errorf("StringMember = %q, want the last string", got)
	}
	if got := NumberMember(obj, "n"); got != 4 {
		t.Errorf("NumberMember = %v", got)
	}
	if StringMember([]byte(`"a"`), "a") != "" || NumberMember(nil, "n") != 0 {
		t.Error("a value that is no object has no members")
	}
	var strs []string
	EachString([]byte(`["p", 1, "q", {"r": "s"}]`), func(s string) { strs = append(strs, s) })
	if len(strs) != 2 || strs[0] != "p" || strs[1] != "q" {
		t.Errorf("EachString = %q", strs)
	}
	if str, ok := StringValue([]byte(`"a\u0062"`)); !ok || str != "ab" {
		t.Errorf("StringValue = %q, %v", str, ok)
	}
	if str, ok := StringValue([]byte(`{"a":"b"}`)); ok || str != "" {
		t.Errorf("StringValue of an object = %q, %v", str, ok)
	}
	if _, ok := StringValue(nil); ok {
		t.Error("StringValue of nothing is a string")
	}
	n := 0
	EachObject([]byte(`[{"a":1}, 2, {"b":{}}]`), func(s *Scanner) { n++; _ = s.Skip() })
	if n != 2 {
		t.Errorf("EachObject saw %d objects", n)
	}
	for in, want := range map[string]bool{
		`{"a": 1, "b": [1, {"c": "}"}]}`: true,
		`{}`:                             true,
		`{"a": 1,}`:                      false,
		`{"a" 1}`:                        false,
		`{"a": 1} x`:                     false,
		`[1]`:                            false,
		`{"a": [1 2]}`:                   true, // lenient inside a value, as Skip is
	} {
		if got := ValidObject([]byte(in)); got != want {
			t.Errorf("ValidObject(%s) = %v, want %v", in, got, want)
		}
	}
}

// A loose read consumes any value the way Skip does: an odd one reads as
// nothing and the object around it goes on.
func TestLoose(t *testing.T) {
	in := []byte(`{"s": "a\u00e9", "bad": "\x", "n": 7, "odd": 0"", "o": {"x": [1]}, "q": "42", "z": 1}`)
	got := map[string]any{}
	s := New(in)
	err := s.Object(func(k []byte) error {
		var err error
		switch string(k) {
		case "s", "bad", "o":
			got[string(k)], err = s.LooseString()
		case "n", "odd", "q":
			got[string(k)], err = s.LooseNumber()
		}
		return err
	})
	if err != nil || !s.AtEnd() {
		t.Fatalf("walk: %v", err)
	}
	want := map[string]any{"s": "aé", "bad": "", "o": "", "n": 7.0, "odd": 0.0, "q": 42.0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}
