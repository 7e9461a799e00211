// Command gotest runs `go test` with the arguments it is given and prints
// what go test prints without -v (a line per package, the output of the
// tests that fail), then one closing line that counts the tests — passed,
// failed, skipped — and, when some skipped, why and what installs the
// parts they need. go test alone never says how much it skipped.
//
//	go run ./scripts/gotest ./...
//	go run ./scripts/gotest -race -timeout 45m ./...
//
// Its exit code is go test's.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		os.Exit(2)
	}
	s := newSummary(os.Stdout)
	s.read(out)
	err = cmd.Wait()
	s.close()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "gotest:", err)
		os.Exit(2)
	case s.failed > 0:
		os.Exit(1) // go test exits non-zero then too; never report a pass
	}
}

type summary struct {
	w                       io.Writer
	passed, failed, skipped int
	output                  map[string][]string // package + test → its output so far
	reasons                 map[string]int      // why tests skipped → how many
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, output: map[string][]string{}, reasons: map[string]int{}}
}

func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(s.w, sc.Text()) // not an event: go's own words
			continue
		}
		s.event(e)
	}
}

// event prints what go test without -v prints: package lines as they come,
// a test's output only when it fails.
func (s *summary) event(e event) {
	if e.Test == "" {
		if e.Output != "" && e.Output != "PASS\n" {
			fmt.Fprint(s.w, e.Output)
		}
		return
	}
	// A subtest's output belongs to its top-level test: it is shown when
	// that fails, as go test shows it.
	name, _, sub := strings.Cut(e.Test, "/")
	key := e.Package + " " + name
	switch {
	case e.Action == "output":
		if !strings.HasPrefix(e.Output, "=== ") { // RUN, PAUSE, CONT: -v's words
			s.output[key] = append(s.output[key], e.Output)
		}
	case sub:
	case e.Action == "pass":
		s.passed++
		delete(s.output, key)
	case e.Action == "skip":
		s.skipped++
		s.reasons[skipReason(s.output[key])]++
		delete(s.output, key)
	case e.Action == "fail":
		s.failed++
		for _, line := range s.output[key] {
			fmt.Fprint(s.w, line)
		}
		delete(s.output, key)
	}
}

// fileLine is the "name_test.go:12: " go test puts before a t.Skip message.
var fileLine = regexp.MustCompile(`^\s*\S+\.go:\d+: `)

// skipReason is the message a test skipped with, without its file and line.
func skipReason(lines []string) string {
	for i, line := range lines {
		if !strings.Contains(line, "--- SKIP") {
			continue
		}
		for _, msg := range lines[i+1:] {
			if fileLine.MatchString(msg) {
				return strings.TrimSpace(fileLine.ReplaceAllString(msg, ""))
			}
		}
	}
	for _, line := range lines {
		if fileLine.MatchString(line) {
			return strings.TrimSpace(fileLine.ReplaceAllString(line, ""))
		}
	}
	return "no reason given"
}

// close prints the closing line and, under it, the reasons for skips.
func (s *summary) close() {
	fmt.Fprintf(s.w, "\n%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	if s.skipped == 0 {
		return
	}
	type reason struct {
		text string
		n    int
	}
	var rs []reason
	for t, n := range s.reasons {
		rs = append(rs, reason{t, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].text < rs[j].text })
	fmt.Fprintln(s.w, "skipped, by reason:")
	for _, r := range rs {
		fmt.Fprintf(s.w, "  %4d  %s\n", r.n, r.text)
	}
	fmt.Fprintln(s.w, "`bash scripts/install-test-deps.sh` installs what they need (tmux, bubblewrap, chromium, prometheus, the agent CLIs from npm, the Temporal CLI); under CI=true no test skips.")
}
