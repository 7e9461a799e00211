package agenttest

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The outputs the end-to-end tests capture are the analyzer's fixtures.
// They are committed; `go test ./internal/agent/agenttest -update` rewrites them
// from the installed CLIs, nothing else does. Claude Code's live with the
// analyzer's tests; the other CLIs' in this package's testdata.
var update = flag.Bool("update", false, "rewrite the captured agent outputs (internal/analyze/testdata/real, internal/agent/agenttest/testdata)")

func fixtureDir(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "internal", "analyze", "testdata", "real")
}

// Placeholders that replace per-run values, so that fixtures carry no
// machine paths and a rewrite only shows real changes.
const (
	fixtureRoot = "/tmp/ralph-e2e"
	fixtureHost = "127.0.0.1:8765"
	fixtureRepo = "/src/ralph" // Gemini CLI's stack traces name its install
)

// saveFixture writes out under -update, after replacing the test's
// temporary root (dir's parent: every t.TempDir of a test shares it) and the
// fake's port.
func saveFixture(t *testing.T, name string, out []byte, dir, fakeURL string) {
	t.Helper()
	writeFixture(t, filepath.Join(fixtureDir(t), name), out, dir, fakeURL)
}

// saveTestdata is saveFixture into this package's testdata.
func saveTestdata(t *testing.T, name string, out []byte, dir, fakeURL string) {
	t.Helper()
	writeFixture(t, filepath.Join(RepoRoot(t), "internal", "agenttest", "testdata", name), out, dir, fakeURL)
}

func writeFixture(t *testing.T, path string, out []byte, dir, fakeURL string) {
	t.Helper()
	if !*update {
		return
	}
	out = normalize(out, filepath.Dir(dir), fakeURL)
	out = bytes.ReplaceAll(out, []byte(RepoRoot(t)), []byte(fixtureRepo))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

func normalize(out []byte, root, fakeURL string) []byte {
	s := string(out)
	s = strings.ReplaceAll(s, root, fixtureRoot)
	// OpenCode titles tool calls with the path minus its leading slash.
	s = strings.ReplaceAll(s, strings.TrimPrefix(root, "/"), strings.TrimPrefix(fixtureRoot, "/"))
	// Claude Code also names per-project directories after the path with
	// every character but letters and digits turned into "-".
	s = strings.ReplaceAll(s, nonAlnum.ReplaceAllString(root, "-"), nonAlnum.ReplaceAllString(fixtureRoot, "-"))
	if u, err := url.Parse(fakeURL); err == nil && u.Host != "" {
		s = strings.ReplaceAll(s, u.Host, fixtureHost)
	}
	return []byte(s)
}

func TestNormalize(t *testing.T) {
	root := "/var/tmp/TestX_sub123"
	in := `{"cwd":"/var/tmp/TestX_sub123/001","memory":"/h/projects/-var-tmp-TestX-sub123-001/m","gw":"(127.0.0.1:40123)","title":"var/tmp/TestX_sub123/001/a"}`
	want := `{"cwd":"/tmp/ralph-e2e/001","memory":"/h/projects/-tmp-ralph-e2e-001/m","gw":"(127.0.0.1:8765)","title":"tmp/ralph-e2e/001/a"}`
	if got := string(normalize([]byte(in), root, "http://127.0.0.1:40123")); got != want {
		t.Errorf("normalize\n got %s\nwant %s", got, want)
	}
}

// TestFixturesAreWellFormed keeps the committed captures usable without the
// CLI installed: each is one JSON object, or NDJSON ending in a result.
func TestFixturesAreWellFormed(t *testing.T) {
	tests := []struct {
		name    string
		isError bool
	}{
		{"claude_json_write_bash_success.json", false},
		{"claude_stream_json_write_bash_success.jsonl", false},
		{"claude_json_resumed_success.json", false},
		{"claude_json_permission_denied_write.json", false},
		{"claude_json_429_unified_headers_apikey.json", true},
		{"claude_stream_json_429_unified_headers_apikey.jsonl", true},
		{"claude_json_5h_limit_oauth.json", true},
		{"claude_stream_json_5h_limit_oauth.jsonl", true},
		{"claude_json_weekly_limit_oauth.json", true},
		{"claude_json_529_overloaded_oauth.json", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(fixtureDir(t), tt.name))
			if err != nil {
				t.Fatalf("%v (regenerate with: go test ./internal/agent/agenttest -update)", err)
			}
			last := bytes.TrimSpace(data)
			if strings.HasSuffix(tt.name, ".jsonl") {
				lines := bytes.Split(last, []byte("\n"))
				for i, l := range lines {
					if !json.Valid(l) {
						t.Fatalf("line %d is not JSON", i+1)
					}
				}
				last = lines[len(lines)-1]
			}
			var r struct {
				Type    string `json:"type"`
				IsError bool   `json:"is_error"`
			}
			if err := json.Unmarshal(last, &r); err != nil || r.Type != "result" || r.IsError != tt.isError {
				t.Errorf("final object: type %q is_error %v (%v), want result, %v", r.Type, r.IsError, err, tt.isError)
			}
			// Go names test temp directories after the test.
			if bytes.Contains(data, []byte(RepoRoot(t))) || bytes.Contains(data, []byte("/Test")) || bytes.Contains(data, []byte("-Test")) {
				t.Error("fixture holds a machine-specific path")
			}
		})
	}
}
