package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"ralph/internal/config"
)

func names(r Report) string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

func TestRunHealthy(t *testing.T) {
	r := Run(context.Background(), defaultProject(project(t, healthyPlan, nil)), healthyEnv())
	if got, want := names(r), "config layout files plan state breaker lock agent agent_version sandbox credentials verify agents git git_identity disk"; got != want {
		t.Errorf("checks = %s, want %s", got, want)
	}
	for _, c := range r.Checks {
		if c.Status != OK {
			t.Errorf("%s: %s %q", c.Name, c.Status, c.Detail)
		}
	}
	if r.Blocking {
		t.Error("a healthy project blocks")
	}
}

func TestRunLeavesOutDependentChecks(t *testing.T) {
	env := healthyEnv()
	env.LookPath = func(string) (string, error) { return "", errors.New("not found") }
	r := Run(context.Background(), defaultProject(t.TempDir()), env)
	if got, want := names(r), "config layout agent sandbox credentials verify agents git git_identity disk"; got != want {
		t.Errorf("checks = %s, want %s", got, want)
	}
	if !r.Blocking || r.Count(Fail) != 2 {
		t.Errorf("blocking = %v with %d failures, want 2 (layout, agent)", r.Blocking, r.Count(Fail))
	}
}

func TestWarningsAloneDoNotBlock(t *testing.T) {
	env := healthyEnv()
	env.FreeBytes = func(string) (uint64, error) { return 500 << 20, nil }
	env.LookupEnv = envOf(nil)
	dir := project(t, healthyPlan, map[string]string{".ralph/status.json": "{"})
	r := Run(context.Background(), defaultProject(dir), env)
	if r.Blocking || r.Count(Warn) != 3 {
		t.Errorf("blocking = %v, %d warnings; want false, 3 (%+v)", r.Blocking, r.Count(Warn), r.Checks)
	}
}

func TestWriteText(t *testing.T) {
	r := Report{Checks: []Check{
		{Name: "config", Status: OK, Detail: "no warnings"},
		{Name: "agent_version", Status: Warn, Detail: "no version"},
		{Name: "disk", Status: Fail, Detail: "1 MB free"},
	}, Blocking: true}

	var plain bytes.Buffer
	if err := WriteText(&plain, r, Style{}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"ok   config         no warnings\n" +
		"warn agent_version  no version\n" +
		"FAIL disk           1 MB free\n" +
		"not ready: 1 problem blocking a run, 1 warning\n"
	if plain.String() != want {
		t.Errorf("plain:\n%s\nwant:\n%s", plain.String(), want)
	}
	if strings.ContainsAny(plain.String(), "\x1b✓✗") {
		t.Error("plain output has colour or symbols")
	}

	var fancy bytes.Buffer
	if err := WriteText(&fancy, r, Style{Fancy: true}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\x1b[32m✓\x1b[0m config", "\x1b[33m!\x1b[0m agent_version", "\x1b[31m✗\x1b[0m disk"} {
		if !strings.Contains(fancy.String(), s) {
			t.Errorf("fancy output lacks %q:\n%s", s, fancy.String())
		}
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		statuses []Status
		want     string
	}{
		{nil, "ready"},
		{[]Status{OK, Warn, Warn}, "ready, with 2 warnings"},
		{[]Status{Fail, Fail}, "not ready: 2 problems blocking a run"},
		{[]Status{Fail, Warn}, "not ready: 1 problem blocking a run, 1 warning"},
	}
	for _, tt := range tests {
		var r Report
		for _, s := range tt.statuses {
			r.add(Check{Name: "x", Status: s})
		}
		if got := Summary(r); got != tt.want {
			t.Errorf("Summary(%v) = %q, want %q", tt.statuses, got, tt.want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Report{}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if checks, ok := got["checks"].([]any); !ok || len(checks) != 0 || got["blocking"] != false {
		t.Errorf("empty report = %s", buf.String())
	}

	buf.Reset()
	r := Report{Checks: []Check{{Name: "disk", Status: Fail, Detail: "1 MB free"}}, Blocking: true}
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Checks []struct {
			Name, Status, Detail string
		}
		Blocking bool
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !back.Blocking || len(back.Checks) != 1 || back.Checks[0].Status != "fail" || back.Checks[0].Name != "disk" {
		t.Errorf("round trip = %+v", back)
	}
}

func TestRunBadAgentCmd(t *testing.T) {
	// A bad AGENT_CMD leaves the default in the config; the agent check
	// must report the configured command, not look for the default.
	p := defaultProject(project(t, healthyPlan, nil))
	ve := &config.ValueError{Source: config.Source{Kind: config.SourceEnv, Name: "CLAUDE_CODE_CMD"}, Key: "AGENT_CMD", Msg: "shell operator '|' is not supported"}
	p.ConfigErr = errors.Join(&config.ValueError{Key: "MAX_LOOPS", Msg: "bad"}, ve)
	r := Run(context.Background(), p, healthyEnv())
	c, _ := find(r, NameAgent)
	want(t, c, NameAgent, Fail, "AGENT_CMD is unusable", "env CLAUDE_CODE_CMD")
	if _, ok := find(r, NameAgentVersion); ok {
		t.Error("the default agent's version was checked")
	}
	if c, _ := find(r, NameConfig); c.Status != Fail {
		t.Errorf("config = %+v", c)
	}
}

// The sandbox in use is named, and one asked for that cannot run blocks.
func TestSandboxCheck(t *testing.T) {
	p := defaultProject(t.TempDir())
	if c := checkSandbox(context.Background(), p.Config); c.Status != OK || !strings.HasPrefix(c.Detail, "none") {
		t.Errorf("no sandbox: %s %q", c.Status, c.Detail)
	}
	p.Config.Sandbox.Provider = "e2b"
	if c := checkSandbox(context.Background(), p.Config); c.Status != Fail || !strings.Contains(c.Detail, "not supported") {
		t.Errorf("e2b: %s %q", c.Status, c.Detail)
	}
}

func TestVerifyCheck(t *testing.T) {
	gated := defaultProject(t.TempDir())
	gated.Config.VerifyCmd, gated.Config.VerifyTimeout, gated.Config.VerifyMaxFailures = "make test", 10*time.Minute, 3
	goProject := defaultProject(project(t, healthyPlan, map[string]string{"go.mod": "module x\n\ngo 1.24\n"}))
	for _, tt := range []struct {
		name   string
		p      Project
		status Status
		detail string
	}{
		{"gated", gated, OK, `VERIFY_CMD "make test"`},
		{"a test command to suggest", goProject, Warn, "VERIFY_CMD='go test ./...'"},
		{"nothing to suggest", defaultProject(t.TempDir()), OK, "no test command detected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := checkVerify(tt.p)
			if c.Status != tt.status || !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("%s %q", c.Status, c.Detail)
			}
		})
	}
}
