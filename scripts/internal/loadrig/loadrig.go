// Package loadrig is the load the scripts serveload and temporalload put
// on a fleet: many sessions, each with a task of scripted agent calls,
// driven over the daemon's API until every task has ended. The daemon's
// side (the binary, its environment, a trusted repository, the API, /proc
// figures) is internal/servetest's, which the tests share.
package loadrig

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
)

// Token is the API token the scripts give their daemons.
const Token = "load-test-token"

// Build builds ralph (without the race detector: the figures are of the
// real thing) and the scripted fake agent into dir.
func Build(dir string) (ralph, fake string, err error) {
	ralph = filepath.Join(dir, "ralph")
	if err := servetest.BuildRalph(ralph, false); err != nil {
		return "", "", err
	}
	fake, err = script.Build(dir)
	return ralph, fake, err
}

// Env is the environment of a load run's processes under base (HOME) with
// RALPH_HOME home.
func Env(base, home string) []string {
	return append(servetest.Env(base, home), "RALPH_API_TOKEN="+Token)
}

// AgentScript is a task of n calls lasting minCall to maxCall each; the
// last one says it is complete. With plan set it also ticks the project's
// fix_plan.md (what `ralph run` reads; the daemon reads the exit signal).
func AgentScript(rnd *rand.Rand, n int, minCall, maxCall time.Duration, plan bool) script.Script {
	var s script.Script
	for i := range n {
		last := i == n-1
		text := fmt.Sprintf("Step %d.", i+1) + servetest.RalphStatus("IN_PROGRESS", false, n-i-1)
		if last {
			text = "All done." + servetest.RalphStatus("COMPLETE", true, 0)
		}
		it := script.Iteration{
			Sleep:       script.Duration(minCall + time.Duration(rnd.Int64N(int64(maxCall-minCall)+1))),
			Files:       map[string]string{fmt.Sprintf("work-%d.txt", i+1): "done\n"},
			StdoutLines: []json.RawMessage{servetest.Result{Session: "load", Text: text, InputTokens: 1000, OutputTokens: 200}.Line()},
		}
		if plan && last {
			it.Files[".ralph/fix_plan.md"] = "# Plan\n\n- [x] Do it\n"
		}
		s.Iterations = append(s.Iterations, it)
	}
	return s
}

// Project makes base/src-NAME, a trusted git repository whose agent (the
// fake at fake) plays s; with plan set it is a `ralph run` project too.
func Project(base, name, ralph, fake string, env []string, s script.Script, plan bool) (string, error) {
	var files map[string]string
	if plan {
		files = map[string]string{".ralph/PROMPT.md": "Do the plan.\n", ".ralph/fix_plan.md": "# Plan\n\n- [ ] Do it\n", ".ralph/AGENT.md": "No build.\n"}
	}
	dir, _, err := servetest.AgentRepo(ralph, fake, env, base, name, s, files)
	return dir, err
}

// Session is the name of the i-th session of a load.
func Session(i int) string { return fmt.Sprintf("s%03d", i) }

// Sessions makes n sessions with project and registers them in
// home/sessions.conf, where a daemon finds them.
func Sessions(home string, n int, project func(name string) (string, error)) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	var conf strings.Builder
	for i := range n {
		dir, err := project(Session(i))
		if err != nil {
			return err
		}
		fmt.Fprintf(&conf, "%s=%s\n", Session(i), dir)
	}
	return os.WriteFile(filepath.Join(home, "sessions.conf"), []byte(conf.String()), 0o600)
}

// Call makes one API request to the daemon at addr; an answer that is not
// a success is an error.
func Call(addr, method, path, body string) ([]byte, error) {
	code, b, err := servetest.Request(addr, Token, method, path, body)
	if err != nil {
		return nil, err
	}
	if code >= 300 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, code, b)
	}
	return b, nil
}

// WaitUp waits until the daemon at addr answers, for at most limit.
func WaitUp(addr string, limit time.Duration) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := Call(addr, "GET", "/api/sessions", ""); err == nil {
			return nil
		}
	}
	return fmt.Errorf("the daemon at %s did not answer within %s", addr, limit)
}

// CreateTasks gives each of the n sessions a task.
func CreateTasks(addr string, n int) error {
	for i := range n {
		if _, err := Call(addr, "POST", "/api/tasks", fmt.Sprintf(`{"session":%q,"title":"Load task %d"}`, Session(i), i)); err != nil {
			return err
		}
	}
	return nil
}

// LoopTasks starts the loop of each of the n sessions' tasks, for at most
// maxLoops iterations.
func LoopTasks(addr string, n, maxLoops int) error {
	for i := range n {
		if _, err := Call(addr, "POST", "/api/tasks/"+Session(i)+"/loop", fmt.Sprintf(`{"max_loops":%d}`, maxLoops)); err != nil {
			return err
		}
	}
	return nil
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

// Tally is how many iterations the tasks ran and how many ended done.
func Tally(tasks []serve.TaskView) (iterations, done int) {
	for _, t := range tasks {
		iterations += t.LoopCount
		if t.State == "done" {
			done++
		}
	}
	return iterations, done
}
