package config

import (
	"strings"
	"testing"
)

// FuzzParseRalphrc checks the parser's promises on any input: it never
// panics, every message names the file, every value points at a real line,
// and every value survives being written back with FormatAssignment.
func FuzzParseRalphrc(f *testing.F) {
	for _, seed := range []string{
		"MAX_CALLS_PER_HOUR=100\n",
		"export ALLOWED_TOOLS=\"Write,Bash(git log:*)\" # tools\r\n",
		"PROJECT_NAME=\"${PROJECT_NAME:-my-project}\"\nX='$(rm -rf /)'\n",
		"CLAUDE_MODEL=`id`\nY=\"$(touch f)\"\n",
		"A = 1\n1B=2\nC=\"open\nD='open\n",
		"\xef\xbb\xbfE=${F\nG=${H:+x}\nI=a\\\n",
		"ANTHROPIC_API_KEY=sk-ant-x\nmax_calls_per_hour=1\n",
	} {
		f.Add([]byte(seed))
	}
	const name = "fuzz/.ralphrc"
	f.Fuzz(func(t *testing.T, data []byte) {
		env := func(k string) (string, bool) { return "v-" + k, k == "HOME" || k == "USER" }
		values, warns, err := ParseRalphrcEnv(name, data, env)
		if err != nil {
			if !strings.HasPrefix(err.Error(), name+":") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, w := range warns {
			if !strings.HasPrefix(w.String(), name+":") || w.Source.Line < 1 || w.Source.Line > lines {
				t.Fatalf("bad warning %q (line %d of %d)", w.String(), w.Source.Line, lines)
			}
		}
		for key, e := range values {
			if e.Source.File != name || e.Source.Line < 1 || e.Source.Line > lines {
				t.Fatalf("%s: bad source %+v", key, e.Source)
			}
			if strings.ContainsFunc(e.Value, isControl) {
				t.Fatalf("%s: control characters in %q", key, e.Value)
			}
			again, w2, err := ParseRalphrc(name, []byte(FormatAssignment(key, e.Value)))
			if err != nil || len(again) != 1 || again[key].Value != e.Value {
				t.Fatalf("%s=%q does not round-trip: %v %v %v", key, e.Value, again, w2, err)
			}
		}
		// Resolving whatever was parsed must not panic either; its messages
		// name the file too.
		_, rwarns, rerr := Resolve(Defaults(), values, nil, nil)
		for _, w := range rwarns {
			if !strings.HasPrefix(w.String(), name+":") {
				t.Fatalf("resolve warning without file name: %q", w.String())
			}
		}
		if rerr != nil {
			for _, line := range strings.Split(rerr.Error(), "\n") {
				if !strings.HasPrefix(line, name+":") {
					t.Fatalf("resolve error without file name: %q", line)
				}
			}
		}
	})
}
