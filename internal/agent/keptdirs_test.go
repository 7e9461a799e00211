package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// While a run keeps them, calls one after another share their temp and
// call directories, emptied between calls: nothing an agent leaves there
// reaches the next call or outlives its own. A directory the agent
// replaced by a link, or opened to others, is removed, never emptied
// through, and the next call gets a new one; release removes the rest.
func TestKeptCallDirectories(t *testing.T) {
	release := KeepCallDirs()
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	victim := t.TempDir()
	if err := os.WriteFile(filepath.Join(victim, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(extra string) (tmp, cd string) {
		t.Helper()
		p := proc(t, "/bin/sh", "-c", `echo "$TMPDIR"; echo "$`+CallDirEnv+`"; ls -A "$TMPDIR" "$`+CallDirEnv+`" | grep -v : | grep . ;
			mkdir -p "$TMPDIR/sub/deeper" && echo litter > "$TMPDIR/sub/deeper/f" && echo s > "$`+CallDirEnv+`/sock"; `+extra)
		if _, err := testRunner().Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(readFile(t, p.StdoutPath)), "\n")
		if len(lines) != 2 {
			t.Fatalf("a call found the litter of an earlier one: %q", lines)
		}
		return lines[0], lines[1]
	}
	empty := func(dir string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 0 {
			t.Errorf("%s after its call: %v, %v", dir, entries, err)
		}
	}
	tmp1, cd1 := call("")
	empty(tmp1)
	empty(cd1)
	tmp2, cd2 := call(`rm -rf "$TMPDIR" && ln -s ` + victim + ` "$TMPDIR"; chmod 755 "$` + CallDirEnv + `"`)
	if tmp2 != tmp1 || cd2 != cd1 {
		t.Errorf("the second call got %s and %s, not the kept %s and %s", tmp2, cd2, tmp1, cd1)
	}
	if _, err := os.Lstat(tmp2); !os.IsNotExist(err) {
		t.Errorf("the temp directory replaced by a link is still there: %v", err)
	}
	if _, err := os.Stat(cd2); !os.IsNotExist(err) {
		t.Errorf("the call directory opened to others is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
		t.Errorf("emptied through the link: %v", err)
	}
	tmp3, cd3 := call("")
	if tmp3 == tmp2 || cd3 == cd2 {
		t.Errorf("a removed directory was handed on: %s, %s", tmp3, cd3)
	}
	release()
	released = true
	for _, d := range []string{tmp3, cd3} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s not removed at release: %v", d, err)
		}
	}
	// Without a run keeping them, every call has its own (TestRunCallDirectory).
	tmp4, cd4 := call("")
	if tmp4 == tmp3 || cd4 == cd3 {
		t.Error("a directory was kept after release")
	}
	for _, d := range []string{tmp4, cd4} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s not removed after its call: %v", d, err)
		}
	}
}
