package activity

import (
	"testing"

	"ralph/internal/jsonscan"
)

func TestErrorMembersText(t *testing.T) {
	for _, c := range []struct{ event, want string }{
		{`{"error":"plain"}`, "plain"},
		{`{"error":{"message":"in an object"}}`, "in an object"},
		{`{"error":{"message":"object"},"message":"the message wins"}`, "the message wins"},
		{`{"error":"string","message":{"not":"a string"}}`, "string"},
		{`{"message":""}`, ""},
	} {
		var e ErrorMembers
		s := jsonscan.New([]byte(c.event))
		err := s.Object(func(k []byte) error {
			switch string(k) {
			case "error":
				return e.ReadError(s)
			case "message":
				var err error
				e.Message, err = s.Raw()
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.event, err)
		}
		if got := e.Text(); got != c.want {
			t.Errorf("%s: Text() = %q, want %q", c.event, got, c.want)
		}
	}
}

func TestView(t *testing.T) {
	if View(nil) != "" || View([]byte("abc")) != "abc" {
		t.Fatal("View does not read its bytes back")
	}
}
