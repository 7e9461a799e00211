package scaffold

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/config"
	"ralph/internal/plan"
)

// exampleBlocks returns each "### Example: TITLE" section's fenced block of
// the rendered prompt, by title.
func exampleBlocks(t *testing.T, prompt string) map[string]string {
	t.Helper()
	out := map[string]string{}
	parts := strings.Split(prompt, "\n### Example: ")
	for _, part := range parts[1:] {
		title, body, _ := strings.Cut(part, "\n")
		_, after, ok := strings.Cut(body, "```text\n")
		if !ok {
			t.Fatalf("example %q has no ```text block", title)
		}
		block, _, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("example %q: unterminated block", title)
		}
		out[title] = block
	}
	return out
}

var statusFields = []string{"STATUS", "TASKS_COMPLETED_THIS_LOOP", "FILES_MODIFIED", "TESTS_STATUS",
	"WORK_TYPE", "TASKS_REMAINING", "EXIT_SIGNAL", "RECOMMENDATION"}

// Every worked example must mean, to ralph's own analyzer, what the prompt
// says it means: an example that parsed differently would teach the agent
// to send signals ralph misreads.
func TestPromptExamplesParse(t *testing.T) {
	tests := map[string]struct {
		status    string
		exit      bool
		tests     string
		testOnly  bool
		remaining int
		questions int
	}{
		"steady progress":       {status: analyze.StatusInProgress, tests: analyze.TestsPassing, remaining: 6},
		"finishing the project": {status: analyze.StatusComplete, exit: true, tests: analyze.TestsPassing},
		"nothing left to do":    {status: analyze.StatusComplete, exit: true, tests: analyze.TestsPassing, testOnly: true},
		"a test-only iteration": {status: analyze.StatusInProgress, tests: analyze.TestsPassing, testOnly: true, remaining: 3},
		"a recurring error":     {status: analyze.StatusInProgress, tests: analyze.TestsFailing, remaining: 5},
		"blocked":               {status: analyze.StatusBlocked, tests: analyze.TestsNotRun, remaining: 4},
		"needs clarification":   {status: analyze.StatusNeedsClarification, tests: analyze.TestsPassing, remaining: 4, questions: 2},
	}
	blocks := exampleBlocks(t, string(Prompt("demo")))
	for title := range blocks {
		if _, ok := tests[title]; !ok {
			t.Errorf("example %q has no expectation in this test", title)
		}
	}
	for title, want := range tests {
		t.Run(title, func(t *testing.T) {
			block, ok := blocks[title]
			if !ok {
				t.Fatalf("the prompt has no example %q", title)
			}
			a, err := analyze.Analyze(strings.NewReader(block), analyze.Options{ExitCode: 0, Now: time.Unix(0, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if a.StatusBlock == nil || a.StatusBlock.Dialect != analyze.DialectRalph {
				t.Fatalf("no RALPH_STATUS block read from:\n%s", block)
			}
			for _, f := range statusFields {
				if _, ok := a.StatusBlock.Fields[f]; !ok {
					t.Errorf("field %s missing", f)
				}
			}
			if a.Status != want.status || a.ExitSignal != want.exit || !a.ExitSignalExplicit {
				t.Errorf("status=%s exit_signal=%v (explicit %v), want %s %v", a.Status, a.ExitSignal, a.ExitSignalExplicit, want.status, want.exit)
			}
			if a.TestsStatus != want.tests || a.IsTestOnly != want.testOnly || a.TasksRemaining != want.remaining {
				t.Errorf("tests=%s test_only=%v remaining=%d, want %s %v %d", a.TestsStatus, a.IsTestOnly, a.TasksRemaining, want.tests, want.testOnly, want.remaining)
			}
			if len(a.ClarificationQuestions) != want.questions || a.ClarificationNeeded != (want.questions > 0) {
				t.Errorf("clarification %v %q, want %d questions", a.ClarificationNeeded, a.ClarificationQuestions, want.questions)
			}
			if a.Recommendation == "" {
				t.Error("no RECOMMENDATION")
			}
			if a.ExitSignal && a.CompletionIndicators < 2 {
				t.Errorf("an exit example needs at least 2 completion indicators to stop the loop, has %d", a.CompletionIndicators)
			}
			if len(a.Warnings) > 0 {
				t.Errorf("warnings: %q", a.Warnings)
			}
		})
	}
}

func TestPromptContents(t *testing.T) {
	p := string(Prompt("Acme"))
	for _, s := range []string{
		"# Acme:", ".ralph/specs/", ".ralph/fix_plan.md", ".ralph/AGENT.md", "`.ralphrc`",
		"---RALPH_STATUS---", "---END_RALPH_STATUS---", "IN_PROGRESS | COMPLETE | BLOCKED | NEEDS_CLARIFICATION",
		"PASSING | FAILING | NOT_RUN", "IMPLEMENTATION | TESTING | DOCUMENTATION | REFACTORING",
		"EXIT_SIGNAL: true", "CLARIFICATION_QUESTIONS", "git commit", "## Protected files",
	} {
		if !strings.Contains(p, s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
	for _, f := range statusFields {
		if !regexp.MustCompile(`(?m)^` + f + `: `).MatchString(p) {
			t.Errorf("the format block lacks %s", f)
		}
	}
	if strings.Contains(string(Prompt("")), "{{") || !strings.HasPrefix(string(Prompt("")), "# This project:") {
		t.Error("an empty project name renders badly")
	}
}

func TestFixPlanParses(t *testing.T) {
	empty := plan.Parse(FixPlan("demo", nil))
	if c := empty.Counts(); c.Total != 1 || c.OpenRequired != 1 || empty.Complete() {
		t.Fatalf("empty plan: %+v", c)
	}
	if n := empty.NextOpen(); n == nil || n.Section != "High Priority" {
		t.Fatalf("next task: %+v", n)
	}
	tasks := []Task{
		{Text: "Login form", Priority: High, Group: "Authentication"},
		{Text: "Password rules", Priority: High, Group: "Authentication", Depth: 1},
		{Text: "Audit log", Priority: Medium},
		{Text: "CSV export", Priority: Low, Group: "Reports"},
		{Text: "Dark mode", Priority: Optional},
		{Text: "Project skeleton", Done: true, Priority: High},
	}
	src := FixPlan("demo", tasks)
	p := plan.Parse(src)
	if len(p.Warnings) > 0 {
		t.Errorf("warnings: %v", p.Warnings)
	}
	c := p.Counts()
	if c.Total != 6 || c.Done != 1 || c.OpenRequired != 4 || c.OpenOptional != 1 {
		t.Fatalf("counts %+v\n%s", c, src)
	}
	if n := p.NextOpen(); n == nil || n.Text != "Login form" {
		t.Fatalf("next %+v", n)
	}
	sections := map[string]string{}
	for _, task := range p.Tasks {
		sections[task.Text] = task.Section
	}
	want := map[string]string{"Login form": "Authentication", "Audit log": "Medium Priority", "CSV export": "Reports",
		"Dark mode": "Optional", "Project skeleton": "Completed"}
	for text, sec := range want {
		if sections[text] != sec {
			t.Errorf("%s is under %q, want %q", text, sections[text], sec)
		}
	}
	for _, h := range []string{"## High Priority", "## Medium Priority", "## Low Priority", "## Optional", "## Completed"} {
		if !bytes.Contains(src, []byte("\n"+h+"\n")) {
			t.Errorf("plan lacks %q", h)
		}
	}
	// Checking every required box completes the plan: the optional one
	// must not hold it open.
	done := plan.Parse(bytes.ReplaceAll(src, []byte("- [ ] Dark"), []byte("- [x] Dark")))
	all := bytes.ReplaceAll(src, []byte("[ ]"), []byte("[x]"))
	if done.Complete() || !plan.Parse(all).Complete() {
		t.Error("completion does not follow the required items")
	}
	onlyOptional := strings.Replace(string(all), "- [x] Dark mode", "- [ ] Dark mode", 1)
	if !plan.Parse([]byte(onlyOptional)).Complete() {
		t.Error("an open optional item blocks completion")
	}
}

func TestAgentNotes(t *testing.T) {
	stacks := []Stack{
		{ID: "go", Name: "Go", Dir: ".", Evidence: []string{"go.mod"}, Commands: Commands{Test: "go test ./...", Build: "go build ./..."}},
		{ID: "node", Name: "Node.js/TypeScript (pnpm)", Dir: "web", Evidence: []string{"package.json"},
			Notes: []string{"package.json has no test script"}},
	}
	got := string(AgentNotes("demo", stacks))
	for _, s := range []string{"## Go\n", "- Test: `go test ./...`", "- Build: `go build ./...`", "in `web/`",
		"Run these from `web/`.", "- Test: TODO", "- Note: package.json has no test script"} {
		if !strings.Contains(got, s) {
			t.Errorf("AGENT.md lacks %q:\n%s", s, got)
		}
	}
	if none := string(AgentNotes("demo", nil)); !strings.Contains(none, "- Test: TODO") {
		t.Errorf("AGENT.md without a stack:\n%s", none)
	}
	if strings.Contains(got, "\n\n\n") {
		t.Errorf("AGENT.md has runs of blank lines:\n%s", got)
	}
}

// The generated .ralphrc must read back without a warning and change no
// default: it documents the keys, it does not configure anything new.
func TestRalphrcRoundTrip(t *testing.T) {
	defaults := config.Defaults().Redacted()
	for _, tc := range []struct{ name, typ string }{{"", ""}, {"it's a \"demo\" $HOME", "go"}} {
		src := Ralphrc(tc.name, tc.typ, nil, "")
		rc, warns, err := config.ParseRalphrc(".ralphrc", src)
		if err != nil || len(warns) > 0 {
			t.Fatalf("parse: %v %v", err, warns)
		}
		cfg, warns, err := config.Resolve(config.Defaults(), rc, nil, nil)
		if err != nil || len(warns) > 0 {
			t.Fatalf("resolve: %v %v", err, warns)
		}
		got := cfg.Redacted()
		if len(got) != len(defaults) {
			t.Fatalf("%d settings, want %d", len(got), len(defaults))
		}
		for i, s := range got {
			want := defaults[i].Value
			switch s.Key {
			case "PROJECT_NAME":
				want = tc.name
			case "PROJECT_TYPE":
				if tc.typ != "" {
					want = tc.typ
				}
			}
			if s.Value != want {
				t.Errorf("%s = %q, want %q", s.Key, s.Value, want)
			}
		}
	}
	src := string(Ralphrc("demo", "go", nil, ""))
	for _, k := range config.Describe() {
		re := regexp.MustCompile(`(?m)^(# )?` + k.Name + `=`)
		if !re.MatchString(src) {
			t.Errorf("key %s is missing", k.Name)
		}
		if !strings.Contains(src, "# "+k.Doc) {
			t.Errorf("key %s has no comment", k.Name)
		}
	}
	if !strings.Contains(src, "# AGENT_CMD=claude") {
		t.Error("AGENT_CMD must stay unset so the provider decides")
	}
}

func TestMergeGitignore(t *testing.T) {
	tests := []struct {
		name, old string
		added     int
	}{
		{"no file", "", len(GitignoreEntries)},
		{"unrelated", "node_modules/\n*.log", len(GitignoreEntries)},
		{"some present, other spellings", "/.ralph/logs\n.ralph/status.json/\n", len(GitignoreEntries) - 2},
		{"complete", strings.Join(GitignoreEntries, "\n") + "\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, added := MergeGitignore([]byte(tt.old), GitignoreEntries)
			if len(added) != tt.added {
				t.Fatalf("added %d, want %d: %q", len(added), tt.added, added)
			}
			if !bytes.HasPrefix(out, []byte(tt.old)) {
				t.Errorf("existing lines changed:\n%s", out)
			}
			again, more := MergeGitignore(out, GitignoreEntries)
			if len(more) != 0 || !bytes.Equal(again, out) {
				t.Errorf("a second merge changed the file: %q", more)
			}
			for _, e := range GitignoreEntries {
				if !slices.ContainsFunc(strings.Split(string(out), "\n"), func(l string) bool { return normIgnore(l) == normIgnore(e) }) {
					t.Errorf("%s missing", e)
				}
			}
		})
	}
}

func TestRalphrcAllowedTools(t *testing.T) {
	stacks := []Stack{{ID: "python", Commands: Commands{Test: "uv run pytest", Lint: "uv run ruff check .", Install: "uv sync"}}}
	tools := AllowedTools(stacks)
	rc, warns, err := config.ParseRalphrc(".ralphrc", Ralphrc("demo", "python", tools, ""))
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	cfg, warns, err := config.Resolve(config.Defaults(), rc, nil, nil)
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if !slices.Equal(cfg.AllowedTools, tools) || !slices.Contains(tools, "Bash(uv run pytest *)") || slices.Contains(tools, "Bash(uv sync *)") {
		t.Fatalf("ALLOWED_TOOLS = %q", cfg.AllowedTools)
	}
}

func TestMissingTools(t *testing.T) {
	tests := []struct {
		cmds Commands
		want []string
	}{
		{Commands{Build: "go build ./...", Test: "go test ./...", Lint: "go vet ./...", Install: "go mod download", Run: "go run ."}, nil},
		{Commands{Test: "npm test", Build: "npm run build"}, nil},
		{Commands{Test: "pnpm test", Build: "pnpm run build"}, []string{"Bash(pnpm run build *)"}},
		{Commands{Test: "make test", Lint: "golangci-lint run"}, []string{"Bash(golangci-lint run *)"}},
		{Commands{Test: "dotnet test", Build: "dotnet build", Lint: "dotnet test"}, []string{"Bash(dotnet build *)", "Bash(dotnet test *)"}},
	}
	for _, tt := range tests {
		got := MissingTools([]Stack{{Commands: tt.cmds}})
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%+v: got %q, want %q", tt.cmds, got, tt.want)
		}
		if tt.want == nil && AllowedTools([]Stack{{Commands: tt.cmds}}) != nil {
			t.Errorf("%+v: ALLOWED_TOOLS written although the default covers it", tt.cmds)
		}
	}
	for _, c := range []struct {
		pattern, cmd string
		want         bool
	}{
		{"Bash(make *)", "make", true}, {"Bash(make *)", "make test", true}, {"Bash(make *)", "makeself", false},
		{"Bash(git log:*)", "git log -1", true}, {"Bash(git branch)", "git branch -D x", false}, {"Bash", "rm x", true},
		{"Read", "cat x", false},
	} {
		if got := covers(c.pattern, c.cmd); got != c.want {
			t.Errorf("covers(%q, %q) = %v", c.pattern, c.cmd, got)
		}
	}
}

// Only what the project chose is set; every default stays a comment, so
// --dry-run attributes defaults to ralph and a line appended later is the
// only setting of its key.
func TestRalphrcSetsOnlyWhatDiffers(t *testing.T) {
	tools := []string{"Write", "Read", "Bash(go test *)"}
	var active []string
	for _, line := range strings.Split(string(Ralphrc("shop", "go", tools, "go test ./...")), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			active = append(active, line)
		}
	}
	want := []string{"PROJECT_NAME=shop", "ALLOWED_TOOLS=" + config.QuoteValue(strings.Join(tools, ",")), "VERIFY_CMD=" + config.QuoteValue("go test ./...")}
	if !slices.Equal(active, want) {
		t.Errorf("active lines %q, want %q", active, want)
	}
}

func TestVerifyCommand(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stacks []Stack
		want   string
	}{
		{"none", nil, ""},
		{"no test command", []Stack{{ID: "make", Dir: "."}}, ""},
		{"one at the root", []Stack{{ID: "go", Dir: ".", Commands: Commands{Test: "go test ./..."}}}, "go test ./..."},
		{"each in its directory, all to pass", []Stack{
			{ID: "go", Dir: ".", Commands: Commands{Test: "go test ./..."}},
			{ID: "node", Dir: "web app", Commands: Commands{Test: "npm test"}},
			{ID: "node", Dir: "web app", Commands: Commands{Test: "npm test"}},
		}, "go test ./... && (cd 'web app' && npm test)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := VerifyCommand(tt.stacks); got != tt.want {
				t.Errorf("%q, want %q", got, tt.want)
			}
		})
	}
}
