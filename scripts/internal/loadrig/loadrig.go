// Package loadrig is what the load scripts (serveload, temporalload) share:
// the scripted agent's task, a trusted project around it, the daemon's API,
// the wait for every task to end, and a process's own CPU and memory from
// /proc (Linux only).
package loadrig

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
)

// Token is the API token the scripts give their daemons.
const Token = "load-test-token"

// Env is the environment of a load run's processes under base (HOME) with
// RALPH_HOME home.
func Env(base, home string) []string {
	return append(os.Environ(), "HOME="+base, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=load", "GIT_AUTHOR_EMAIL=load@example.com",
		"GIT_COMMITTER_NAME=load", "GIT_COMMITTER_EMAIL=load@example.com", "RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0",
		"RALPH_HOME="+home, "RALPH_API_TOKEN="+Token)
}

// AgentScript is a task of n calls lasting minCall to maxCall each; the
// last one says it is complete. With plan set it also ticks the project's
// fix_plan.md (what `ralph run` reads; the daemon reads the exit signal).
func AgentScript(rnd *rand.Rand, n int, minCall, maxCall time.Duration, plan bool) script.Script {
	var s script.Script
	for i := range n {
		last := i == n-1
		block := fmt.Sprintf("Step %d.\n---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\nWORK_TYPE: IMPLEMENTATION\nFILES_MODIFIED: 1\nTASKS_REMAINING: %d\n---END_RALPH_STATUS---", i+1, n-i-1)
		if last {
			block = "All done.\n---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: true\nWORK_TYPE: IMPLEMENTATION\nFILES_MODIFIED: 1\nTASKS_REMAINING: 0\n---END_RALPH_STATUS---"
		}
		text, _ := json.Marshal(block)
		it := script.Iteration{
			Sleep: script.Duration(minCall + time.Duration(rnd.Int64N(int64(maxCall-minCall)+1))),
			Files: map[string]string{fmt.Sprintf("work-%d.txt", i+1): "done\n"},
			StdoutLines: []json.RawMessage{json.RawMessage(fmt.Sprintf(
				`{"type":"result","subtype":"success","is_error":false,"session_id":"load","result":%s,"usage":{"input_tokens":1000,"output_tokens":200}}`, text))},
		}
		if plan && last {
			it.Files[".ralph/fix_plan.md"] = "# Plan\n\n- [x] Do it\n"
		}
		s.Iterations = append(s.Iterations, it)
	}
	return s
}

// Project makes base/src/NAME, a trusted git repository whose agent (the
// fake at fake) plays s; with plan set it is a `ralph run` project too.
func Project(base, name, ralph, fake string, env []string, s script.Script, plan bool) (string, error) {
	dir := filepath.Join(base, "src", name)
	scriptPath := filepath.Join(base, "scripts", name+".json")
	for _, d := range []string{dir, filepath.Dir(scriptPath)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	if err := s.Write(scriptPath); err != nil {
		return "", err
	}
	files := map[string]string{
		".ralphrc":  fmt.Sprintf("CLAUDE_CODE_CMD=\"env %s=%s %s\"\nMAX_CALLS_PER_HOUR=10000\n", script.EnvScript, scriptPath, fake),
		"README.md": "# " + name + "\n",
	}
	if plan {
		files[".ralph/PROMPT.md"] = "Do the plan.\n"
		files[".ralph/fix_plan.md"] = "# Plan\n\n- [ ] Do it\n"
		files[".ralph/AGENT.md"] = "No build.\n"
	}
	for f, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	for _, c := range [][]string{{ralph, "trust", "-C", dir}, {"git", "init", "-q"}, {"git", "add", "-A"}, {"git", "commit", "-qm", "init"}} {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v: %v\n%s", c, err, out)
		}
	}
	return dir, nil
}

var client = &http.Client{Timeout: 30 * time.Second}

// Call makes one API request to the daemon at addr.
func Call(addr, method, path, body string) ([]byte, error) {
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	return b, err
}

// WaitEnded lists the tasks every 200 ms until none is running or queued,
// calling each (if set) before every look, for at most limit.
func WaitEnded(addr string, limit time.Duration, each func()) ([]serve.TaskView, error) {
	began := time.Now()
	for {
		if each != nil {
			each()
		}
		body, err := Call(addr, "GET", "/api/tasks", "")
		if err != nil {
			return nil, err
		}
		var tasks []serve.TaskView
		if err := json.Unmarshal(body, &tasks); err != nil {
			return nil, err
		}
		finished := 0
		for _, t := range tasks {
			if t.State != "running" && t.State != "queued" {
				finished++
			}
		}
		if finished == len(tasks) {
			return tasks, nil
		}
		if time.Since(began) > limit {
			return nil, fmt.Errorf("%d of %d tasks finished after %s", finished, len(tasks), limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// CPUTime is the process's own user+system CPU, without its children's.
func CPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields after the command: state is 0, utime 11, stime 12 (in ticks;
	// 100 per second on Linux).
	u, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+sy) * 10 * time.Millisecond
}

// RSS is the process's resident memory in bytes.
func RSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
