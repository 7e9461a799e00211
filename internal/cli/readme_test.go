package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Every `ralph …` command the README shows in a shell block exists, with
// the flags it shows: a newcomer copies them.
func TestReadmeCommandsExist(t *testing.T) {
	for _, file := range readmeFiles(t) {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		inShell, n, checked := false, 0, 0
		for sc.Scan() {
			n++
			line := sc.Text()
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trimmed, "```sh"), strings.HasPrefix(trimmed, "```bash"):
				inShell = true
				continue
			case strings.HasPrefix(trimmed, "```"):
				inShell = false
				continue
			}
			if !inShell {
				continue
			}
			for _, words := range ralphInvocations(trimmed) {
				checked++
				if err := checkInvocation(words); err != nil {
					t.Errorf("%s:%d: %s: %v", file, n, strings.Join(words, " "), err)
				}
			}
		}
		f.Close()
		if checked == 0 && strings.HasSuffix(file, "README.md") {
			t.Errorf("%s: no ralph command found; is the README where it was?", file)
		}
	}
}

func readmeFiles(t *testing.T) []string {
	files := []string{"../../README.md"}
	if more, _ := os.ReadDir("../../docs"); len(more) > 0 {
		for _, e := range more {
			if strings.HasSuffix(e.Name(), ".md") {
				files = append(files, "../../docs/"+e.Name())
			}
		}
	}
	return files
}

// ralphInvocations finds the `ralph …` commands of a shell line: comments
// dropped, pipelines and lists split.
func ralphInvocations(line string) [][]string {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	if strings.HasPrefix(line, "#") {
		return nil
	}
	var out [][]string
	for _, part := range strings.FieldsFunc(line, func(r rune) bool { return r == '|' || r == ';' || r == '&' }) {
		words := strings.Fields(part)
		for len(words) > 0 && strings.Contains(words[0], "=") { // FOO=1 ralph …
			words = words[1:]
		}
		if len(words) > 0 && (words[0] == "ralph" || strings.HasSuffix(words[0], "/ralph")) {
			out = append(out, words[1:])
		}
	}
	return out
}

func checkInvocation(args []string) error {
	root := NewRoot(IO{})
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return &unknownCommand{rest[0]}
	}
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if name == "" || name == "help" {
				continue
			}
			if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
				return &unknownFlag{"--" + name}
			}
		case strings.HasPrefix(a, "-") && len(a) == 2 && a != "-h" && a != "-":
			if cmd.Flags().ShorthandLookup(a[1:]) == nil && cmd.InheritedFlags().ShorthandLookup(a[1:]) == nil {
				return &unknownFlag{a}
			}
		}
	}
	return nil
}

type unknownCommand struct{ name string }

func (e *unknownCommand) Error() string { return "no such command " + e.name }

type unknownFlag struct{ name string }

func (e *unknownFlag) Error() string { return "no such flag " + e.name }

func TestCheckInvocation(t *testing.T) {
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"run", "--max-loops", "3", "-C", "x"}, true},
		{[]string{"--live"}, true},
		{[]string{"logs", "-f"}, true},
		{[]string{"frobnicate"}, false},
		{[]string{"run", "--max-loop", "3"}, false},
		{[]string{"status", "-z"}, false},
	} {
		if err := checkInvocation(tt.args); (err == nil) != tt.ok {
			t.Errorf("%q: %v", tt.args, err)
		}
	}
	if got := ralphInvocations(`ralph run --json | jq .   # stream`); len(got) != 1 || strings.Join(got[0], " ") != "run --json" {
		t.Errorf("pipeline: %q", got)
	}
}

// Every relative link in the README and docs/ leads to a file that exists
// and, with an anchor, to a heading in it.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range readmeFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			body, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", file, target, err)
				continue
			}
			if anchor != "" && !hasAnchor(string(body), anchor) {
				t.Errorf("%s: link %s: no heading with that anchor in %s", file, target, dest)
			}
		}
	}
}

// hasAnchor reports a heading whose GitHub anchor is anchor.
func hasAnchor(md, anchor string) bool {
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}
