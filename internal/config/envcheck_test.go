package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestUnknownEnv(t *testing.T) {
	warns := UnknownEnv([]string{
		"RALPH_MAX_LOPS=5",                    // a typo
		"RALPH_CLAUDE_CODE_CMD=x",             // the bash tool's name with the prefix: known
		"RALPH_MAX_LOOPS=5",                   // known
		"RALPH_HOME=/srv/ralph",               // the daemon's
		"RALPH_FAKE_SCRIPT=s.json",            // the test suite's
		"RALPH_ACCOUNT_WORK=claude config=/c", // an account of the daemon
		"RALPH_FROBNICATE=1",                  // nothing near
		"PATH=/bin", "MAX_LOPS=3",             // not ralph's prefix
		"RALPH_GITHUB_REPO=o/r", // one letter short of RALPH_GITHUB_REPOS
	})
	got := fmt.Sprint(warns)
	for _, want := range []string{
		"env RALPH_FROBNICATE: unknown variable (ignored) ",
		"env RALPH_GITHUB_REPO: unknown variable (ignored); did you mean RALPH_GITHUB_REPOS?",
		"env RALPH_MAX_LOPS: unknown variable (ignored); did you mean RALPH_MAX_LOOPS?",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %s\nlack %q", got, want)
		}
	}
	if len(warns) != 3 {
		t.Errorf("want 3 warnings, got %d: %s", len(warns), got)
	}
}

// Every RALPH_ name the code reads is known to UnknownEnv, so no documented
// variable is ever called unknown: a new one must be added to fleetEnv.
func TestUnknownEnvKnowsEveryNameTheCodeReads(t *testing.T) {
	lit := regexp.MustCompile(`"(RALPH_[A-Z0-9_]+)"`)
	known := knownEnv()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllSubmatch(src, -1) {
			// RALPH_STATUS is the status block's name, not a variable.
			if name := string(m[1]); !known[name] && !harness(name) && !hasPrefix(name, fleetPrefixes) && name != "RALPH_STATUS" {
				t.Errorf("%s reads %s, which UnknownEnv would call unknown", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
