package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ralph/internal/agent"
	"ralph/internal/engine"
	"ralph/internal/loop"
)

// effectiveEnv is what a process started with parent plus extra sees:
// the last assignment of a name wins, as in os/exec.
func effectiveEnv(parent, extra []string) map[string]string {
	m := map[string]string{}
	for _, kv := range append(slices.Clone(parent), extra...) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestDemoAgentEnvHidesTheUsersEnvironment(t *testing.T) {
	parent := []string{"PATH=/usr/bin", "LANG=C.UTF-8", "HOME=/home/someone", "ANTHROPIC_API_KEY=sk-secret-1",
		"CLAUDE_CODE_OAUTH_TOKEN=secret-2", "HTTPS_PROXY=http://proxy.example:8080", "ANTHROPIC_MODEL=big", "RALPH_MAX_LOOPS=1"}
	extra := demoAgentEnv(parent, "/tmp/h", "http://127.0.0.1:1234")
	for _, kv := range extra {
		if strings.Contains(kv, "secret") || strings.Contains(kv, "proxy.example") {
			t.Errorf("the agent's environment carries %q", kv)
		}
	}
	env := effectiveEnv(parent, extra)
	for k, want := range map[string]string{
		"PATH": "/usr/bin", "LANG": "C.UTF-8", "HOME": "/tmp/h", "CLAUDE_CONFIG_DIR": "/tmp/h/config", "TMPDIR": "/tmp/h/tmp",
		"ANTHROPIC_BASE_URL": "http://127.0.0.1:1234", "ANTHROPIC_API_KEY": demoAPIKey, "CLAUDE_CODE_OAUTH_TOKEN": "",
		"HTTPS_PROXY": "", "ANTHROPIC_MODEL": "", "RALPH_MAX_LOOPS": "", "CLAUDE_CODE_MAX_RETRIES": "0",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
}

// demoRun runs runDemo with view in place of the engine and returns its
// output.
func demoRun(t *testing.T, o demoOptions, view demoView) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	o.IO = IO{Out: &out, Err: &errb}
	err := runDemo(context.Background(), &o, view)
	if errb.Len() > 0 {
		t.Errorf("stderr: %s", errb.String())
	}
	return out.String(), err
}

// runDemo hands the view the demo's own settings, whatever the user's
// environment says, an agent pointed at a live fake, and afterwards sums
// up what the agent wrote.
func TestRunDemoWiring(t *testing.T) {
	t.Setenv("RALPH_MAX_LOOPS", "1")
	t.Setenv("RALPH_DELAY", "1m")
	dir := filepath.Join(t.TempDir(), "p")
	var baseURL string
	out, err := demoRun(t, demoOptions{Agent: "builtin", Dir: dir}, func(ctx context.Context, ios IO, log io.Writer, spec loop.Spec, deps engine.Deps) (engine.Result, error) {
		if !spec.Live || spec.OutputFormat != "stream-json" || len(spec.Agents) != 1 || strings.Join(spec.Agents[0].AllowedTools, ",") != "Write,Edit,Read" ||
			spec.Policy.Delay != 0 || spec.Policy.Budget.MaxLoops != 5 || spec.Agents[0].Name != "demo-agent" || spec.Policy.NoContinuity {
			t.Errorf("spec %+v", spec)
		}
		if deps.Store.ProjectDir() != dir || deps.Sessions == nil || deps.Control == nil || deps.Emit != nil || len(deps.Agents) != 1 {
			t.Errorf("deps %+v", deps)
		}
		argv, err := deps.Agents[0].Command(agent.Invocation{Prompt: "p", AllowedTools: spec.Agents[0].AllowedTools, OutputFormat: spec.OutputFormat})
		if err != nil || len(argv) < 2 || argv[1] != demoAgentCmd {
			t.Errorf("agent argv %q %v", argv, err)
		}
		baseURL = effectiveEnv(nil, spec.Env)["ANTHROPIC_BASE_URL"]
		resp, err := http.Head(baseURL + "/")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("the fake is not serving at %q: %v", baseURL, err)
		} else {
			resp.Body.Close()
		}
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return engine.Result{Reason: "project_complete", Message: "done", Loops: 3}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"What just happened", "iterations:     3", "files written:  notes.txt\n",
		"stopped:        project_complete — done", "project:        " + dir, "ralph enable"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "did not end") {
		t.Errorf("a complete run reported as unfinished:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ralph", "fix_plan.md")); err != nil {
		t.Errorf("--dir project not kept: %v", err)
	}
	if resp, err := http.Head(baseURL + "/"); err == nil {
		resp.Body.Close()
		t.Error("the fake still serves after the demo")
	}
}

// Without --dir the project lives in a temporary directory that goes away
// afterwards, unless --keep; the agent's home always goes.
func TestRunDemoCleansUp(t *testing.T) {
	for _, keep := range []bool{false, true} {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		var project string
		_, err := demoRun(t, demoOptions{Agent: "builtin", Keep: keep}, func(_ context.Context, _ IO, _ io.Writer, _ loop.Spec, deps engine.Deps) (engine.Result, error) {
			project = deps.Store.ProjectDir()
			return engine.Result{Reason: "project_complete", Loops: 3}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(tmp)
		_, statErr := os.Stat(project)
		if keep && (statErr != nil || len(entries) != 1) || !keep && (statErr == nil || len(entries) != 0) {
			t.Errorf("keep=%v: project %s (%v), left in TMPDIR: %v", keep, project, statErr, entries)
		}
	}
}

func TestRunDemoPassesAFailedRunOn(t *testing.T) {
	out, err := demoRun(t, demoOptions{Agent: "builtin", Dir: filepath.Join(t.TempDir(), "p")}, func(context.Context, IO, io.Writer, loop.Spec, engine.Deps) (engine.Result, error) {
		return engine.Result{Reason: "circuit_breaker_open", Message: "no progress", ExitCode: 2, Loops: 2}, nil
	})
	if code, _, _ := classify(nil, err); code != 2 || !strings.Contains(out, "did not end as scripted") {
		t.Errorf("err %v, output:\n%s", err, out)
	}
}

func TestDemoAgentIsHidden(t *testing.T) {
	var out bytes.Buffer
	root := NewRoot(IO{Out: &out, Err: &out})
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "demo ") || strings.Contains(out.String(), demoAgentCmd) {
		t.Errorf("help:\n%s", out.String())
	}
}

func TestDemoFilesLeaveOutRalphState(t *testing.T) {
	for rel, want := range map[string]bool{
		".ralph/logs": true, ".ralph/status.json": true, ".ralph/.loop_state": true, ".ralph/ralph.lock": true,
		".ralph/fix_plan.md": false, "main.go": false, ".ralph/specs/greet.md": false,
	} {
		if got := ralphState(rel, rel == ".ralph/logs"); got != want {
			t.Errorf("ralphState(%q) = %v", rel, got)
		}
	}
}

func TestChooseDemoAgent(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	env := []string{"ANTHROPIC_API_KEY=demo"}
	ag, err := chooseDemoAgent(context.Background(), demoAuto, env)
	if err != nil || ag.name != "demo-agent" || ag.argv[1] != demoAgentCmd || !strings.Contains(ag.note, "not installed") {
		t.Errorf("no claude, auto: %+v %v", ag, err)
	}
	if _, err := chooseDemoAgent(context.Background(), demoClaude, env); err == nil || !strings.Contains(err.Error(), "--agent builtin") {
		t.Errorf("no claude, --agent claude: %v", err)
	}
	// A claude that only works with the demo's environment: the check runs
	// it the way the loop will.
	script := "#!/bin/sh\n[ \"$ANTHROPIC_API_KEY\" = demo ] && echo '1.0.0 (Claude Code)'\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ag, err = chooseDemoAgent(context.Background(), demoAuto, env)
	if err != nil || ag.name != "claude" || ag.argv[0] != filepath.Join(bin, "claude") || ag.note != "" {
		t.Errorf("claude, auto: %+v %v", ag, err)
	}
	if ag, _ := chooseDemoAgent(context.Background(), demoBuiltin, env); ag.name != "demo-agent" || ag.note != "" {
		t.Errorf("claude, --agent builtin: %+v", ag)
	}
	ag, err = chooseDemoAgent(context.Background(), demoAuto, []string{"ANTHROPIC_API_KEY=other"})
	if err != nil || ag.name != "demo-agent" || !strings.Contains(ag.note, "--version") {
		t.Errorf("broken claude, auto: %+v %v", ag, err)
	}
}
