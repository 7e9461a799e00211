package fleet

import (
	"strings"
	"testing"
)

func TestCommandValidate(t *testing.T) {
	cli := Who{Surface: SurfaceCLI, User: "ann"}
	long := strings.Repeat("x", MaxTitle+1)
	for _, c := range []struct {
		cmd  Command
		want string // part of the error; "" is valid
	}{
		{Command{Verb: Start, Session: "api", Title: "Add login", Who: cli}, ""},
		{Command{Verb: StartLoop, Session: "api", Title: "Add login", MaxLoops: 30, Who: cli}, ""},
		{Command{Verb: Stop, Session: "api", Who: Who{Surface: SurfaceTelegram, User: "42"}}, ""},
		{Command{Verb: Answer, Session: "api", Text: "Use Redis", Who: cli}, ""},
		{Command{Verb: Start, Session: "api", Title: "  ", Who: cli}, "title: a task needs a title"},
		{Command{Verb: StartLoop, Session: "api", Title: long, Who: cli}, "title: 501 characters; at most 500"},
		{Command{Verb: Answer, Session: "api", Who: cli}, "text: an answer needs its text"},
		{Command{Verb: Loop, Session: "api", MaxLoops: -1, Who: cli}, "max_loops: -1"},
		{Command{Verb: Loop, Session: "", Who: cli}, "session: a command names"},
		{Command{Verb: "dance", Session: "api", Who: cli}, `verb: unknown command "dance"`},
		{Command{Verb: Stop, Session: "api"}, `who.surface: unknown surface ""`},
		{Command{Verb: Stop, Session: "api", Who: Who{Surface: "fax"}}, `who.surface: unknown surface "fax"`},
	} {
		err := c.cmd.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.cmd, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want %q", c.cmd, err, c.want)
		}
	}
}

func TestWhoAndDid(t *testing.T) {
	c := Command{Verb: Stop, Session: "api", Who: Who{Surface: SurfaceTelegram, User: "alice"}}
	if got := c.Did(); got != "stop by telegram:alice" {
		t.Errorf("Did = %q", got)
	}
	if got := (Who{Surface: SurfaceWeb}).String(); got != "web" {
		t.Errorf("Who = %q", got)
	}
}

func TestClipTitle(t *testing.T) {
	long := strings.Repeat("é", MaxTitle+10)
	got := ClipTitle(long)
	c := Command{Verb: Start, Session: "s", Title: got, Who: Who{Surface: SurfaceGitHub}}
	if c.Validate() != nil || !strings.HasSuffix(got, "…") {
		t.Errorf("clipped title %d runes: %v", len([]rune(got)), c.Validate())
	}
	if got := ClipTitle("  Add\n login  "); got != "Add login" {
		t.Errorf("ClipTitle = %q", got)
	}
}
