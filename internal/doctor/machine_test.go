package doctor

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/agents"
	"ralph/internal/config"
)

func TestCheckAgent(t *testing.T) {
	tests := []struct {
		name      string
		agentCmd  string
		provider  string
		lookPath  func(string) (string, error)
		status    Status
		fragments []string
		argv      []string
	}{
		{name: "found", agentCmd: "claude", status: OK, fragments: []string{"claude", "/usr/local/bin/claude"}, argv: []string{"claude"}},
		{name: "absolute path", agentCmd: "/opt/claude", status: OK, fragments: []string{"/opt/claude"}, argv: []string{"/opt/claude"},
			lookPath: func(f string) (string, error) { return f, nil }},
		{name: "words", agentCmd: "npx @anthropic-ai/claude-code", status: OK, fragments: []string{"npx @anthropic-ai/claude-code", "/usr/bin/npx"},
			argv: []string{"npx", "@anthropic-ai/claude-code"}, lookPath: func(string) (string, error) { return "/usr/bin/npx", nil }},
		{name: "missing names the command", agentCmd: "my-claude --flag", status: Fail, fragments: []string{"my-claude not found", "AGENT_CMD"}},
		{name: "unsplittable", agentCmd: "claude | tee log", status: Fail, fragments: []string{"AGENT_CMD", "cannot be used"}},
		{name: "another provider", agentCmd: "codex", provider: "codex", status: OK, fragments: []string{"codex: codex", "/usr/local/bin/codex"}, argv: []string{"codex"},
			lookPath: func(f string) (string, error) { return "/usr/local/bin/" + f, nil }},
		{name: "another provider missing says how to install it", agentCmd: "gemini", provider: "gemini", status: Fail,
			fragments: []string{"gemini not found", "@google/gemini-cli"}, lookPath: func(string) (string, error) { return "", exec.ErrNotFound }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := healthyEnv()
			if tt.lookPath != nil {
				env.LookPath = tt.lookPath
			}
			cfg := config.Defaults()
			cfg.AgentCmd, cfg.AgentProvider = tt.agentCmd, tt.provider
			if cfg.AgentProvider == "" {
				cfg.AgentProvider = "claude"
			}
			c, argv := checkAgent(cfg, env)
			want(t, c, NameAgent, tt.status, tt.fragments...)
			if strings.Join(argv, " ") != strings.Join(tt.argv, " ") {
				t.Errorf("argv = %q, want %q", argv, tt.argv)
			}
		})
	}
}

func TestCheckAgentVersion(t *testing.T) {
	tests := []struct {
		name      string
		min       string
		out       string
		err       error
		hang      bool
		status    Status
		fragments []string
	}{
		{name: "new enough", min: "2.0.76", out: "2.1.3 (Claude Code)\n", status: OK, fragments: []string{"2.1.3", "CLAUDE_MIN_VERSION 2.0.76"}},
		{name: "equal", min: "2.0.76", out: "2.0.76 (Claude Code)", status: OK},
		{name: "no minimum", min: "", out: "claude 1.0.0", status: OK, fragments: []string{"1.0.0"}},
		{name: "too old blocks", min: "2.0.76", out: "2.0.9 (Claude Code)", status: Fail, fragments: []string{"2.0.9 is older than CLAUDE_MIN_VERSION 2.0.76", "npm install"}},
		{name: "prerelease compares by numbers", min: "2.1", out: "v2.1.0-beta.1", status: OK},
		{name: "no version in output", min: "2.0.76", out: "usage: claude [options]", status: Warn, fragments: []string{"no version", "usage: claude"}},
		{name: "command fails", min: "2.0.76", out: "error: unknown option\n", err: errBoom, status: Warn, fragments: []string{"--version` failed", "boom", "unknown option"}},
		{name: "failure output is redacted", out: "bad key sk-ant-api03-abcdefghijklmnopqrstuvwxyz\n", err: errBoom, status: Warn, fragments: []string{"[redacted]"}},
		{name: "timeout", min: "2.0.76", hang: true, status: Warn, fragments: []string{"did not answer within 10s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := healthyEnv()
			var gotArgv []string
			env.Run = func(ctx context.Context, argv []string) (string, error) {
				gotArgv = argv
				if tt.hang {
					<-ctx.Done()
					return "", ctx.Err()
				}
				return tt.out, tt.err
			}
			cfg := config.Defaults()
			cfg.MinAgentVersion = tt.min
			ctx := context.Background()
			if tt.hang {
				// Stand in for the 10 s limit running out, without waiting.
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Now().Add(-time.Second))
				defer cancel()
			}
			c := checkAgentVersion(ctx, cfg, env, []string{"npx", "claude-code"})
			want(t, c, NameAgentVersion, tt.status, tt.fragments...)
			if strings.Join(gotArgv, " ") != "npx claude-code --version" {
				t.Errorf("ran %q", gotArgv)
			}
			if strings.Contains(c.Detail, "abcdefghijklmnop") {
				t.Errorf("detail leaks a key: %q", c.Detail)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"2.0.76", "2.0.76", 0},
		{"2.0.9", "2.0.76", -1},
		{"2.1.0", "2.0.76", 1},
		{"2.1", "2.1.0", 0},
		{"10.0.0", "9.9.9", 1},
		{"2.0.76 (Claude Code)", "2.0.77", -1},
		{"", "1.0", -1},
	}
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if got := ParseVersion("Claude Code v2.0.76 (build 7)"); got != "2.0.76" {
		t.Errorf("ParseVersion = %q", got)
	}
}

func TestCheckCredentials(t *testing.T) {
	const secret = "sk-ant-api03-verysecret"
	tests := []struct {
		name      string
		env       map[string]string
		secrets   map[string]config.Secret
		files     map[string]int64
		home      error
		os        string
		status    Status
		fragments []string
	}{
		{name: "api key in environment", env: map[string]string{"ANTHROPIC_API_KEY": secret}, status: OK, fragments: []string{"ANTHROPIC_API_KEY (environment)"}},
		{name: "oauth token", env: map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": secret}, status: OK, fragments: []string{"CLAUDE_CODE_OAUTH_TOKEN"}},
		{name: "auth token in .ralphrc", secrets: map[string]config.Secret{"ANTHROPIC_AUTH_TOKEN": secret}, status: OK, fragments: []string{"ANTHROPIC_AUTH_TOKEN (.ralphrc)"}},
		{name: "environment wins over .ralphrc", env: map[string]string{"ANTHROPIC_API_KEY": secret},
			secrets: map[string]config.Secret{"ANTHROPIC_API_KEY": secret}, status: OK, fragments: []string{"ANTHROPIC_API_KEY (environment)"}},
		{name: "empty variable does not count", env: map[string]string{"ANTHROPIC_API_KEY": ""}, status: Warn, fragments: []string{"none found"}},
		{name: "login file in home", files: map[string]int64{"/home/u/.claude/.credentials.json": 400}, status: OK, fragments: []string{"~/.claude/.credentials.json"}},
		{name: "empty login file does not count", files: map[string]int64{"/home/u/.claude/.credentials.json": 0}, status: Warn},
		{name: "login file in CLAUDE_CONFIG_DIR", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"},
			files: map[string]int64{"/cfg/.credentials.json": 10, "/home/u/.claude/.credentials.json": 10}, status: OK, fragments: []string{"$CLAUDE_CONFIG_DIR/.credentials.json"}},
		{name: "CLAUDE_CONFIG_DIR without login", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"},
			files: map[string]int64{"/home/u/.claude/.credentials.json": 10}, status: Warn},
		{name: "bedrock", env: map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1"}, status: OK, fragments: []string{"CLAUDE_CODE_USE_BEDROCK"}},
		{name: "bedrock off", env: map[string]string{"CLAUDE_CODE_USE_BEDROCK": "0"}, status: Warn},
		{name: "several named", env: map[string]string{"ANTHROPIC_API_KEY": secret},
			files: map[string]int64{"/home/u/.claude/.credentials.json": 10}, status: OK, fragments: []string{"ANTHROPIC_API_KEY", "login ~/.claude"}},
		{name: "nothing", status: Warn, fragments: []string{"none found", "/login"}},
		{name: "no home", home: errBoom, status: Warn},
		{name: "macOS keychain mentioned", os: "darwin", status: Warn, fragments: []string{"Keychain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := healthyEnv()
			env.LookupEnv = envOf(tt.env)
			env.Stat = statOnly(tt.files)
			if tt.home != nil {
				env.HomeDir = func() (string, error) { return "", tt.home }
			}
			if tt.os != "" {
				env.OS = tt.os
			}
			cfg := config.Defaults()
			cfg.Secrets = tt.secrets
			c := checkCredentials(cfg, env)
			want(t, c, NameCredentials, tt.status, tt.fragments...)
			if strings.Contains(c.Detail, "verysecret") {
				t.Errorf("detail prints a secret: %q", c.Detail)
			}
		})
	}
}

func TestCheckGit(t *testing.T) {
	yes := func(context.Context, string) (bool, error) { return true, nil }
	no := func(context.Context, string) (bool, error) { return false, nil }
	fail := func(context.Context, string) (bool, error) { return false, errBoom }
	tests := []struct {
		name      string
		git       func(*Git)
		status    Status
		fragments []string
	}{
		{name: "clean", git: func(*Git) {}, status: OK, fragments: []string{"branch main", "clean"}},
		{name: "not a repository", git: func(g *Git) { g.IsRepo = no }, status: Warn, fragments: []string{"not a git repository", "git init"}},
		{name: "git unusable", git: func(g *Git) { g.IsRepo = fail }, status: Warn, fragments: []string{"git is not usable", "boom"}},
		{name: "subdirectory of a repository", git: func(g *Git) {
			g.Root = func(context.Context, string) (string, error) { return "/repo", nil }
		}, status: OK, fragments: []string{"inside the git repository at /repo"}},
		{name: "detached", git: func(g *Git) {
			g.CurrentBranch = func(context.Context, string) (string, error) { return "", nil }
		}, status: OK, fragments: []string{"detached HEAD"}},
		{name: "dirty lists a few paths", git: func(g *Git) {
			g.IsClean = no
			g.DirtyPaths = func(context.Context, string) ([]string, error) {
				return []string{"a.go", "b.go", "c.go", "d.go", "e.go", "f.go", "g.go"}, nil
			}
		}, status: Warn, fragments: []string{"uncommitted changes: a.go; b.go; c.go; d.go; e.go; and 2 more", "commit or stash"}},
		{name: "dirty without paths", git: func(g *Git) {
			g.IsClean = no
			g.DirtyPaths = func(context.Context, string) ([]string, error) { return nil, errBoom }
		}, status: Warn, fragments: []string{"uncommitted changes ("}},
		{name: "status fails", git: func(g *Git) { g.IsClean = fail }, status: Warn, fragments: []string{"status unknown"}},
		{name: "branch fails", git: func(g *Git) {
			g.CurrentBranch = func(context.Context, string) (string, error) { return "", errBoom }
		}, status: OK, fragments: []string{"branch unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := healthyEnv()
			env.Git.IsRepo = yes
			tt.git(&env.Git)
			want(t, checkGit(context.Background(), "/repo/app", env), NameGit, tt.status, tt.fragments...)
		})
	}
	env := healthyEnv()
	want(t, checkGit(context.Background(), "/repo", env), NameGit, OK, "git repository, branch main, clean")
}

func TestCheckDisk(t *testing.T) {
	tests := []struct {
		name      string
		free      uint64
		err       error
		status    Status
		fragments []string
	}{
		{name: "plenty", free: 50 << 30, status: OK, fragments: []string{"50.0 GB free"}},
		{name: "exactly 1 GB", free: 1 << 30, status: OK, fragments: []string{"1.0 GB"}},
		{name: "under 1 GB", free: 1<<30 - 1, status: Warn, fragments: []string{"below 1.0 GB"}},
		{name: "exactly 100 MB", free: 100 << 20, status: Warn, fragments: []string{"100.0 MB"}},
		{name: "under 100 MB blocks", free: 99 << 20, status: Fail, fragments: []string{"99.0 MB free", "below 100.0 MB"}},
		{name: "empty", free: 0, status: Fail, fragments: []string{"0 B free"}},
		{name: "unknown", err: errBoom, status: Warn, fragments: []string{"free space unknown", "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := healthyEnv()
			var asked string
			env.FreeBytes = func(p string) (uint64, error) { asked = p; return tt.free, tt.err }
			want(t, checkDisk("/proj", env), NameDisk, tt.status, tt.fragments...)
			if asked != "/proj" {
				t.Errorf("measured %q, want the project directory", asked)
			}
		})
	}
}

func TestSystemRunsWithoutShell(t *testing.T) {
	// The real runner: argv is not interpreted by a shell, and output of
	// a failing command still comes back.
	out, err := runCommand(context.Background(), []string{"sh", "-c", "echo $0 'a;b'; exit 3", "x"})
	var exitErr interface{ ExitCode() int }
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Fatalf("err = %v", err)
	}
	if strings.TrimSpace(out) != "x a;b" {
		t.Errorf("out = %q", out)
	}
	if _, err := runCommand(context.Background(), []string{"no-such-command-for-doctor"}); err == nil {
		t.Error("a missing command ran")
	}
	if free, err := freeBytes(t.TempDir()); err != nil || free == 0 {
		t.Errorf("freeBytes = %d, %v", free, err)
	}
}

func TestCheckFallbacks(t *testing.T) {
	env := healthyEnv()
	env.LookPath = func(f string) (string, error) {
		if f == "gemini" {
			return "", exec.ErrNotFound
		}
		return "/usr/local/bin/" + f, nil
	}
	cfg := config.Defaults()
	if _, ok := checkFallbacks(cfg, env); ok {
		t.Error("no fallbacks configured, yet a check was reported")
	}
	cfg.FallbackAgents = []string{"codex"}
	c, _ := checkFallbacks(cfg, env)
	want(t, c, NameFallbacks, OK, "codex")
	cfg.FallbackAgents = []string{"codex", "gemini"}
	c, _ = checkFallbacks(cfg, env)
	want(t, c, NameFallbacks, Warn, "gemini (gemini not found", "@google/gemini-cli", "ready: codex")
}

func TestOtherCredentials(t *testing.T) {
	env := healthyEnv()
	env.LookupEnv = func(k string) (string, bool) { return "", false }
	cfg := config.Defaults()
	cfg.AgentProvider = "codex"
	want(t, checkCredentials(cfg, env), NameCredentials, Warn, "OPENAI_API_KEY", "codex login")
	env.LookupEnv = func(k string) (string, bool) { return "sk-x", k == "OPENAI_API_KEY" }
	c := checkCredentials(cfg, env)
	want(t, c, NameCredentials, OK, "OPENAI_API_KEY (environment)")
	if strings.Contains(c.Detail, "sk-x") {
		t.Errorf("a secret's value reached the report: %q", c.Detail)
	}
	cfg.AgentProvider = "command"
	want(t, checkCredentials(cfg, env), NameCredentials, OK, "plain command")
}

func TestCheckInstalledAgents(t *testing.T) {
	want(t, checkInstalledAgents(context.Background(), healthyEnv()), NameAgents, OK, "found: claude 2.1.3", "not found: codex")
	env := healthyEnv()
	env.Agents = func(context.Context) []agents.Found {
		return []agents.Found{{Name: "gemini", Command: "gemini", Err: exec.ErrNotFound}}
	}
	want(t, checkInstalledAgents(context.Background(), env), NameAgents, OK, "found: none", "not found: gemini")
}

// With no key in sight, `claude auth status` decides: not logged in blocks a
// run (every call would fail), a login is reported, an unreadable answer
// leaves the warning.
func TestClaudeLogin(t *testing.T) {
	warn := Check{Name: NameCredentials, Status: Warn, Detail: "none found"}
	tests := []struct {
		out    string
		err    error
		status Status
		detail string
	}{
		{`{"loggedIn": false, "authMethod": "none"}`, nil, Fail, "not logged in"},
		{`{"loggedIn": true, "authMethod": "claude.ai"}`, nil, OK, "claude.ai"},
		{"error: unknown command 'auth'", errors.New("exit status 1"), Warn, "none found"},
		{"{}", nil, Warn, "none found"},
	}
	for _, tt := range tests {
		env := healthyEnv()
		var argv []string
		env.Run = func(_ context.Context, a []string) (string, error) { argv = a; return tt.out, tt.err }
		c := claudeLogin(context.Background(), env, []string{"claude"}, warn)
		if c.Status != tt.status || !strings.Contains(c.Detail, tt.detail) {
			t.Errorf("%q: %+v", tt.out, c)
		}
		if strings.Join(argv, " ") != "claude auth status" {
			t.Errorf("ran %q", argv)
		}
	}
}
