package activity

import (
	"testing"

	"ralph/internal/jsonscan"
)

func TestEventMembersErrorText(t *testing.T) {
	for _, c := range []struct{ event, want string }{
		{`{"error":"plain"}`, "plain"},
		{`{"error":{"message":"in an object"}}`, "in an object"},
		{`{"error":{"message":"object"},"message":"the message wins"}`, "the message wins"},
		{`{"error":"string","message":{"not":"a string"}}`, "string"},
		{`{"message":"","type":"error","usage":{}}`, ""},
	} {
		var e EventMembers
		s := jsonscan.New([]byte(c.event))
		err := s.Object(func(k []byte) error { return e.Member(s, k) })
		if err != nil {
			t.Fatalf("%s: %v", c.event, err)
		}
		if got := e.Error.Text(); got != c.want {
			t.Errorf("%s: Text() = %q, want %q", c.event, got, c.want)
		}
	}
}

func TestView(t *testing.T) {
	if View(nil) != "" || View([]byte("abc")) != "abc" {
		t.Fatal("View does not read its bytes back")
	}
}
