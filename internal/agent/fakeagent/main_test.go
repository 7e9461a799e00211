package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
)

func build(t *testing.T) string {
	t.Helper()
	bin, err := script.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

type outcome struct {
	stdout, stderr string
	code           int
}

func call(t *testing.T, bin, scriptPath, dir string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), script.EnvScript+"="+scriptPath)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return outcome{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

func TestFakeAgentPlaysScript(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "script.json")
	s := script.Script{Iterations: []script.Iteration{
		{
			Stdout: "call {{call}} in {{cwd}}: {{prompt}}\n",
			StdoutLines: []json.RawMessage{
				json.RawMessage(`{"type": "result",  "result": "{{prompt}}"}`),
				json.RawMessage(`"plain {{call}}"`),
			},
			Stderr: "warn\n", ExitCode: 3,
			Files: map[string]string{"sub/a.txt": "A{{call}}"},
		},
		{Append: map[string]string{"sub/a.txt": "+more"}, Remove: []string{"gone.txt"}},
	}}
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gone.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)

	got := call(t, bin, path, dir, "-p", "--", `say "hi"`)
	want := outcome{
		stdout: "call 1 in " + real + `: say "hi"` + "\n" +
			`{"type":"result","result":"say \"hi\""}` + "\nplain 1\n",
		stderr: "warn\n", code: 3,
	}
	if got != want {
		t.Errorf("call 1 = %+v\nwant     %+v", got, want)
	}
	if got := call(t, bin, path, dir, "--resume", "s1", "-p", "next"); got.code != 0 || got.stdout != "" {
		t.Errorf("call 2 = %+v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "a.txt")); string(b) != "A1+more" {
		t.Errorf("a.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt not removed: %v", err)
	}

	// Exhausted without repeat_last.
	if got := call(t, bin, path, dir); got.code != script.ExitScriptError || !strings.Contains(got.stderr, "this is call 3") {
		t.Errorf("call 3 = %+v", got)
	}

	calls, err := script.Calls(path)
	if err != nil || len(calls) != 3 {
		t.Fatalf("calls %+v, %v", calls, err)
	}
	if !slices.Equal(calls[1].Args, []string{"--resume", "s1", "-p", "next"}) || calls[1].Call != 2 || calls[1].Dir != real {
		t.Errorf("call 2 recorded as %+v", calls[1])
	}
}

func TestFakeAgentRepeatLastAndConcurrency(t *testing.T) {
	bin := build(t)
	path := filepath.Join(t.TempDir(), "script.json")
	s := script.Script{RepeatLast: true, Iterations: []script.Iteration{{Stdout: "{{call}}"}}}
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var mu sync.Mutex
	var seen []int
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			got := call(t, bin, path, t.TempDir())
			k, err := strconv.Atoi(got.stdout)
			if err != nil || got.code != 0 {
				t.Errorf("call: %+v", got)
				return
			}
			mu.Lock()
			seen = append(seen, k)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(seen)
	for i, k := range seen {
		if k != i+1 {
			t.Fatalf("call numbers %v: want 1..%d, each once", seen, n)
		}
	}
	if calls, _ := script.Calls(path); len(calls) != n {
		t.Errorf("%d calls recorded", len(calls))
	}
}

func TestFakeAgentNoScript(t *testing.T) {
	bin := build(t)
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != script.ExitScriptError || !strings.Contains(string(out), script.EnvScript) {
		t.Errorf("exit %d: %s", cmd.ProcessState.ExitCode(), out)
	}
}

func TestDuration(t *testing.T) {
	var it script.Iteration
	if err := json.Unmarshal([]byte(`{"sleep": "1.5s", "line_delay": 0.25}`), &it); err != nil {
		t.Fatal(err)
	}
	if time.Duration(it.Sleep) != 1500*time.Millisecond || time.Duration(it.LineDelay) != 250*time.Millisecond {
		t.Errorf("%v %v", it.Sleep, it.LineDelay)
	}
	if err := json.Unmarshal([]byte(`{"sleep": true}`), &it); err == nil {
		t.Error("bad duration accepted")
	}
}
