package agents

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/claude"
	"ralph/internal/agent/codex"
	"ralph/internal/agent/command"
	"ralph/internal/agent/gemini"
	"ralph/internal/agent/opencode"
)

func TestNames(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"claude", "codex", "gemini", "opencode", "command"}) {
		t.Errorf("Names() = %q", got)
	}
	for name, want := range map[string]string{"claude": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode", "command": "", "aider": ""} {
		if got := DefaultCommand(name); got != want {
			t.Errorf("DefaultCommand(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestNew(t *testing.T) {
	now := func() time.Time { return time.Unix(0, 0) }
	tests := []struct {
		name string
		o    Options
		want agent.Adapter
	}{
		{"claude", Options{ExtraArgs: []string{"--max-turns", "9"}, Now: now},
			&claude.Adapter{Base: agent.Base{Cmd: []string{"claude"}, ExtraArgs: []string{"--max-turns", "9"}}}},
		{"codex", Options{Cmd: []string{"npx", "@openai/codex"}, Sandbox: "read-only"},
			&codex.Adapter{Base: agent.Base{Cmd: []string{"npx", "@openai/codex"}}, Sandbox: "read-only"}},
		{"gemini", Options{ApprovalMode: "auto_edit"}, &gemini.Adapter{Base: agent.Base{Cmd: []string{"gemini"}}, ApprovalMode: "auto_edit"}},
		{"opencode", Options{}, &opencode.Adapter{Base: agent.Base{Cmd: []string{"opencode"}}}},
		{"command", Options{Cmd: []string{"./agent.sh"}, PromptMode: "arg"}, &command.Adapter{Base: agent.Base{Cmd: []string{"./agent.sh"}}, PromptMode: "arg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.name, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != tt.name {
				t.Errorf("name %q", a.Name())
			}
			// Runner and Now are set; the rest is as asked.
			v := reflect.ValueOf(a).Elem()
			if v.FieldByName("Runner").IsNil() || v.FieldByName("Now").IsNil() {
				t.Errorf("runner or clock missing: %+v", a)
			}
			v.FieldByName("Runner").SetZero()
			v.FieldByName("Now").SetZero()
			if !reflect.DeepEqual(a, tt.want) {
				t.Errorf("adapter\n got %+v\nwant %+v", a, tt.want)
			}
		})
	}
	a, _ := New("claude", Options{Now: now})
	if got := a.(*claude.Adapter).Now(); !got.Equal(time.Unix(0, 0)) {
		t.Errorf("clock not passed: %v", got)
	}
	cmd := []string{"codex"}
	a, _ = New("codex", Options{Cmd: cmd})
	cmd[0] = "changed"
	if a.(*codex.Adapter).Cmd[0] != "codex" {
		t.Error("adapter shares the caller's slice")
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"aider", Options{}, "claude, codex, gemini, opencode, command"},
		{"", Options{}, "unknown agent"},
		{"command", Options{}, "--agent-cmd"},
		{"claude", Options{Cmd: []string{""}}, "no command"},
		{"codex", Options{Sandbox: "none"}, "sandbox mode"},
		{"gemini", Options{ApprovalMode: "YOLO"}, "approval mode"},
		{"command", Options{Cmd: []string{"x"}, PromptMode: "pipe"}, "prompt mode"},
		// An option for another agent is refused, not dropped.
		{"claude", Options{Sandbox: "read-only"}, "sandbox applies only to codex"},
		{"codex", Options{ApprovalMode: "yolo"}, "approval mode applies only to gemini"},
		{"gemini", Options{PromptMode: "arg"}, "prompt mode applies only to command"},
	}
	for _, tt := range tests {
		if _, err := New(tt.name, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q, %+v) = %v, want it to mention %q", tt.name, tt.o, err, tt.want)
		}
	}
}

// TestCapabilitiesMissing: the loop prints these once at start.
func TestCapabilitiesMissing(t *testing.T) {
	want := map[string][]string{
		"claude":   nil,
		"codex":    {"permission-denial", "allow-list"},
		"gemini":   {"permission-denial", "allow-list"},
		"opencode": {"allow-list"},
		"command":  {"structured output", "token usage", "permission-denial", "usage-limit", "session resume", "allow-list"},
	}
	for _, name := range Names() {
		o := Options{}
		if name == "command" {
			o.Cmd = []string{"x"}
		}
		a, err := New(name, o)
		if err != nil {
			t.Fatal(err)
		}
		missing := a.Capabilities().Missing()
		if len(missing) != len(want[name]) {
			t.Errorf("%s: missing %q", name, missing)
			continue
		}
		for i, w := range want[name] {
			if !strings.Contains(missing[i], w) {
				t.Errorf("%s: %q lacks %q", name, missing[i], w)
			}
		}
	}
	var b bytes.Buffer
	for _, m := range (agent.Capabilities{}).Missing() {
		b.WriteString(m + "\n")
	}
	if strings.Count(b.String(), "\n") != 7 {
		t.Errorf("zero capabilities:\n%s", b.String())
	}
}

// SANDBOX_PROVIDER=agent: the flags that switch each agent's own sandbox
// on, exactly as its CLI takes them (checked against the real CLIs'
// --help and, end to end, in package e2e), and a refusal for the agents
// that have none and for arguments that would undo it.
func TestOwnSandboxArgv(t *testing.T) {
	inv := agent.Invocation{Dir: "/p", Prompt: "Work.", OutputFormat: "json"}
	tests := []struct {
		name string
		o    Options
		want []string // the argv, or nil for a refusal
		err  string
	}{
		{"claude", Options{OwnSandbox: true}, []string{"claude", "--output-format", "json", "--settings",
			`{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false}}`,
			"-p", "--", "Work."}, ""},
		{"claude", Options{}, []string{"claude", "--output-format", "json", "-p", "--", "Work."}, ""},
		{"claude", Options{OwnSandbox: true, ExtraArgs: []string{"--max-turns", "9"}}, []string{"claude", "--output-format", "json", "--settings",
			`{"sandbox":{"enabled":true,"failIfUnavailable":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false}}`,
			"--max-turns", "9", "-p", "--", "Work."}, ""},
		{"claude", Options{OwnSandbox: true, ExtraArgs: []string{"--settings", "{}"}}, nil, "would replace the sandbox settings"},
		{"claude", Options{OwnSandbox: true, ExtraArgs: []string{"--settings={}"}}, nil, "would replace the sandbox settings"},
		{"codex", Options{OwnSandbox: true}, []string{"codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "--", "Work."}, ""},
		{"codex", Options{OwnSandbox: true, Sandbox: "read-only"}, []string{"codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--", "Work."}, ""},
		{"codex", Options{OwnSandbox: true, Sandbox: "danger-full-access"}, nil, "CODEX_SANDBOX=danger-full-access switches it off"},
		{"codex", Options{Sandbox: "danger-full-access"}, []string{"codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access", "--", "Work."}, ""},
		{"codex", Options{OwnSandbox: true, ExtraArgs: []string{"--dangerously-bypass-approvals-and-sandbox"}}, nil, "would undo the sandbox"},
		{"codex", Options{OwnSandbox: true, ExtraArgs: []string{"-s", "danger-full-access"}}, nil, "would undo the sandbox"},
		{"gemini", Options{OwnSandbox: true}, nil, "gemini has no sandbox of its own"},
		{"opencode", Options{OwnSandbox: true}, nil, "opencode has no sandbox of its own"},
		{"command", Options{OwnSandbox: true, Cmd: []string{"./a"}}, nil, "command has no sandbox of its own"},
	}
	for _, tt := range tests {
		a, err := New(tt.name, tt.o)
		var argv []string
		if err == nil {
			argv, err = a.Command(inv)
		}
		if tt.want == nil {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %+v: %q, %v; want a refusal with %q", tt.name, tt.o, argv, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(argv, tt.want) {
			t.Errorf("%s %+v:\n got %q, %v\nwant %q", tt.name, tt.o, argv, err, tt.want)
		}
	}
}
