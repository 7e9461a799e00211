package agenttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ralph/internal/fakeapi"
)

// jsonLines decodes every line of a CLI's stdout into a T and hands keep
// the line as it was printed; a line that is not JSON fails the test.
func jsonLines[T any](t *testing.T, stdout []byte, keep func(e *T, raw []byte)) []T {
	t.Helper()
	var events []T
	for line := range bytes.Lines(bytes.TrimSpace(stdout)) {
		var e T
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("line is not JSON: %v\n%s", err, line)
		}
		keep(&e, line)
		events = append(events, e)
	}
	return events
}

// succeeded fails the test unless the CLI exited 0, showing what it printed.
func succeeded(t *testing.T, res Result) {
	t.Helper()
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// wroteHello checks the file the scripted tool call writes.
func wroteHello(t *testing.T, dir string) {
	t.Helper()
	if got, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(got) != fileContent {
		t.Errorf("hello.txt = %q, %v", got, err)
	}
}

// toolsRan checks the model calls of a scripted run of tools: the first
// offers the tools named, and the last carries the file's content back as
// a tool result, which proves that the tool really ran.
func toolsRan(t *testing.T, reqs []fakeapi.Request, tools ...string) {
	t.Helper()
	if len(reqs) < 2 {
		t.Fatalf("fake saw %d model calls", len(reqs))
	}
	offered := reqs[0].Messages.ToolNames()
	for _, tool := range tools {
		if !slices.Contains(offered, tool) {
			t.Errorf("offered tools %v lack %s", offered, tool)
		}
	}
	if got := reqs[len(reqs)-1].Messages.LastToolResult(); !strings.Contains(got, strings.TrimSpace(fileContent)) {
		t.Errorf("tool result seen by the model = %q", got)
	}
}
