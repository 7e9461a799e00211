package gate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGrantCoversExactToolAndCommand(t *testing.T) {
	bash := func(cmd string) Approval {
		in, _ := json.Marshal(map[string]string{"command": cmd, "description": "x"})
		return Approval{Tool: "Bash", Input: in}
	}
	write := Approval{Tool: "Write", Input: json.RawMessage(`{"file_path":"a.txt","content":"x"}`)}
	for _, tc := range []struct {
		name    string
		granted Approval
		later   Approval
		want    bool
	}{
		{"the same command", bash("npm publish"), bash("npm publish"), true},
		{"another description, the same command", bash("npm publish"), Approval{Tool: "Bash", Input: json.RawMessage(`{"command":"npm publish"}`)}, true},
		{"an added argument", bash("npm publish"), bash("npm publish --force"), false},
		{"a prefix of it", bash("npm publish"), bash("npm"), false},
		{"another space", bash("npm publish"), bash("npm  publish"), false},
		{"a trailing space", bash("npm publish"), bash("npm publish "), false},
		{"chained after it", bash("ls"), bash("ls && rm -rf x"), false},
		{"another case", bash("ls"), bash("LS"), false},
		{"another tool with the command", bash("ls"), Approval{Tool: "BashOutput", Input: json.RawMessage(`{"command":"ls"}`)}, false},
		{"no command", bash("ls"), Approval{Tool: "Bash", Input: json.RawMessage(`{}`)}, false},
		{"the same tool", write, Approval{Tool: "Write", Input: json.RawMessage(`{"file_path":"b.txt"}`)}, true},
		{"another tool", write, Approval{Tool: "Edit", Input: json.RawMessage(`{"file_path":"a.txt"}`)}, false},
		{"a tool whose name starts the same", write, Approval{Tool: "WriteAll"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, ok := GrantFor(tc.granted)
			if !ok {
				t.Fatalf("no grant for %+v", tc.granted)
			}
			if got := g.Covers(tc.later); got != tc.want {
				t.Errorf("grant %+v covers %s %s: %v, want %v", g, tc.later.Tool, tc.later.Input, got, tc.want)
			}
			// A kept grant (its key) covers exactly what the grant does.
			if k, ok := KeyOf(tc.later); (ok && k == g.Key()) != tc.want {
				t.Errorf("key %q of the grant, %q (%v) of the later call: want covered %v", g.Key(), k, ok, tc.want)
			}
		})
	}
}

func TestGrantForNothingWide(t *testing.T) {
	for _, a := range []Approval{
		{},
		{Tool: "Bash", Input: json.RawMessage(`{}`)},
		{Tool: "Bash", Input: json.RawMessage(`{"command":""}`)},
		{Tool: "Bash", Input: json.RawMessage(`not json`)},
	} {
		if g, ok := GrantFor(a); ok {
			t.Errorf("%s %s granted %+v; a grant is for one exact call", a.Tool, a.Input, g)
		}
	}
	if (Grant{}).Covers(Approval{Tool: "Bash", Input: json.RawMessage(`{"command":""}`)}) {
		t.Error("the empty grant covers a call")
	}
}

func TestGrantKeyKeepsNoCommand(t *testing.T) {
	g := Grant{Tool: "Bash", Command: "curl -H 'Authorization: Bearer s3cr3t' x"}
	if k := g.Key(); strings.Contains(k, "s3cr3t") || !strings.HasPrefix(k, "Bash:") {
		t.Errorf("the key %q", k)
	}
}
