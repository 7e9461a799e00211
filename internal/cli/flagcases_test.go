package cli

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"ralph/internal/config"
	"ralph/internal/github"
	"ralph/internal/importer"
	"ralph/internal/serve"
	"ralph/internal/temporal"
)

// The command lines of each command's flag test. A case with want nil is
// refused before the command runs.

func setupFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newSetupCmd, []flagCase[setupOptions]{
		{argv: "setup my-app", want: &setupOptions{Dir: "my-app"}},
		{argv: "setup --force --json my-app", want: &setupOptions{Dir: "my-app", Force: true, JSON: true}},
		{argv: "setup", code: exitBadArgs, says: "accepts 1 arg(s), received 0"},
		{argv: "setup a b", code: exitBadArgs, says: "Run 'ralph setup --help' for usage."},
		{argv: "setup x --bogus", code: exitBadArgs, says: "unknown flag: --bogus"},
		{argv: "setup x --forse", code: exitBadArgs, says: "did you mean --force?"},
	})
}

func enableFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newEnableCmd, []flagCase[enableOptions]{
		{argv: "enable", want: &enableOptions{Dir: ".", GitHubLimit: 30}},
		{argv: "enable -C proj --name shop --from-prd docs/prd.md --force --non-interactive --json",
			want: &enableOptions{Dir: "proj", Name: "shop", PRD: "docs/prd.md", GitHubLimit: 30, Force: true, NonInteractive: true, JSON: true}},
		{argv: "enable --from-checklist TODO.md", want: &enableOptions{Dir: ".", Checklist: "TODO.md", GitHubLimit: 30}},
		{argv: "enable --from-github-label ralph --github-limit 5 --github-repo o/r --github-api https://ghe.example.com/api/v3",
			want: &enableOptions{Dir: ".", GitHubLabel: "ralph", GitHubLimit: 5, GitHubRepo: "o/r", GitHubAPI: "https://ghe.example.com/api/v3"}},
		{argv: "enable extra-arg", code: exitBadArgs, says: `unknown command "extra-arg"`},
		{argv: "enable --nope", code: exitBadArgs, says: "Run 'ralph enable --help' for usage."},
		{argv: "enable --github-limit many", code: exitBadArgs, says: "invalid argument"},
	})
}

func importFlagTest(t *testing.T, path string) {
	defaults := func(o importOptions) *importOptions {
		o.State, o.Select, o.Limit, o.MinScore = "open", importer.SelectFirst, github.DefaultLimit, importer.DefaultThreshold
		if o.Config == nil {
			o.Config = config.Layer{}
		}
		return &o
	}
	checkFlags(t, path, newImportCmd, []flagCase[importOptions]{
		{argv: "import prd.md", want: defaults(importOptions{File: "prd.md"})},
		{argv: "import - my-app --force --dry-run", want: defaults(importOptions{File: "-", Name: "my-app", Force: true, DryRun: true})},
		// The flags that are configuration keys go to the config layer, as text.
		{argv: "import prd.md --agent-cmd 'npx claude' --timeout 90s --model opus",
			want: defaults(importOptions{File: "prd.md", Config: flagLayer(
				"AGENT_CMD", "--agent-cmd", "npx claude", "CLAUDE_TIMEOUT_MINUTES", "--timeout", "90s", "CLAUDE_MODEL", "--model", "opus")})},
		{argv: "import --github-issue 42 proj", want: defaults(importOptions{Issue: "42", Name: "proj"})},
		{argv: "import --github-label a,b --github-label c --exclude-label blocked --select priority --limit 5 --min-score 0 --github-state all --github-repo o/r --github-api http://127.0.0.1:1",
			want: &importOptions{Labels: []string{"a", "b", "c"}, Exclude: []string{"blocked"}, Select: "priority", Limit: 5, MinScore: 0,
				State: "all", Repo: "o/r", APIURL: "http://127.0.0.1:1", Config: config.Layer{}}},
		{argv: "import --github-search 'is:open login' --github-milestone v1 --github-assignee dev1",
			want: defaults(importOptions{Search: "is:open login", Milestone: "v1", Assignee: "dev1"})},
		{argv: "import", code: 1, says: "nothing to import"},
		{argv: "import a b c", code: 1, says: "Run 'ralph --help' for usage."},
		{argv: "import --github-issue 1 a b", code: 1, says: "not both"},
		{argv: "import --select newest prd.md", code: 1, says: `--select "newest": want first or priority`},
		{argv: "import --github-state merged prd.md", code: 1, says: "want open, closed or all"},
		{argv: "import --limit 0 prd.md", code: 1, says: "--limit 0"},
		{argv: "import --min-score 101 prd.md", code: 1, says: "--min-score 101"},
		{argv: "import --github-issue 1 --github-label x", code: 1, says: "does not combine"},
	})
}

func migrateFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newMigrateCmd, []flagCase[migrateOptions]{
		{argv: "migrate", want: &migrateOptions{Dir: "."}},
		{argv: "migrate --dry-run --force --json -C old", want: &migrateOptions{Dir: "old", Force: true, DryRun: true, JSON: true}},
		{argv: "migrate old", code: exitBadArgs, says: `unknown command "old"`},
		{argv: "migrate --bogus", code: exitBadArgs, says: "Run 'ralph migrate --help' for usage."},
	})
}

func doctorFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newDoctorCmd, []flagCase[doctorOptions]{
		{argv: "doctor", want: &doctorOptions{Dir: "."}},
		{argv: "doctor -C proj --json", want: &doctorOptions{Dir: "proj", JSON: true}},
		{argv: "doctor --dir=proj", want: &doctorOptions{Dir: "proj"}},
		{argv: "doctor proj", code: 1, says: "Run 'ralph --help' for usage."},
		{argv: "doctor --jsonn", code: 1, says: "did you mean --json?"},
	})
}

func statusFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newStatusCmd, []flagCase[statusOptions]{
		{argv: "status", want: &statusOptions{Project: projectFlags{dir: "."}}},
		{argv: "status -C proj --json", want: &statusOptions{Project: projectFlags{dir: "proj", json: true}}},
		{argv: "status proj", code: 1, says: "Run 'ralph --help' for usage."},
		{argv: "status --follow", code: 1, says: "unknown flag: --follow"},
	})
}

func logsFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newLogsCmd, []flagCase[logsOptions]{
		{argv: "logs", want: &logsOptions{Project: projectFlags{dir: "."}, Lines: 50, Poll: pollInterval}},
		{argv: "logs -f -n 7 --dir p", want: &logsOptions{Project: projectFlags{dir: "p"}, Follow: true, Lines: 7, LinesSet: true, Poll: pollInterval}},
		{argv: "logs --iteration 3 --raw --stderr -f",
			want: &logsOptions{Project: projectFlags{dir: "."}, Follow: true, Iteration: 3, Raw: true, Stderr: true, Lines: 50, Poll: pollInterval}},
		{argv: "logs --iteration 0", code: 1, says: "iterations are numbered from 1"},
		{argv: "logs -n -1", code: 1, says: "-n -1: want 0 or more lines"},
		{argv: "logs --raw", code: 1, says: "--raw and --stderr go with --iteration N"},
		{argv: "logs --stderr", code: 1, says: "Run 'ralph --help' for usage."},
		{argv: "logs --folow", code: 1, says: "did you mean --follow?"},
		{argv: "logs 7", code: 1, says: `unknown command "7"`},
	})
}

func replayFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newReplayCmd, []flagCase[replayOptions]{
		{argv: "replay", want: &replayOptions{Target: "."}},
		{argv: "replay proj/.ralph", want: &replayOptions{Target: "proj/.ralph"}},
		{argv: "replay t12 --server http://127.0.0.1:9 --home h", want: &replayOptions{Target: "t12", Server: "http://127.0.0.1:9", Home: "h"}},
		{argv: "replay a b", code: 1, says: "Run 'ralph --help' for usage."},
		{argv: "replay --json", code: 1, says: "unknown flag: --json"},
	})
}

func statsFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newStatsCmd, []flagCase[statsOptions]{
		{argv: "stats", want: &statsOptions{Project: projectFlags{dir: "."}, Loc: time.Local}},
		{argv: "stats --json --since 2026-11-01 -C p",
			want: &statsOptions{Project: projectFlags{dir: "p", json: true}, Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local), Loc: time.Local}},
		{argv: "stats --since 2026-11-20T10:00:00Z",
			want: &statsOptions{Project: projectFlags{dir: "."}, Since: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), Loc: time.Local}},
		{argv: "stats --since yesterday", code: 1, says: `--since "yesterday"`},
		{argv: "stats extra", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func circuitStatusFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newCircuitStatusCmd, []flagCase[circuitStatusOptions]{
		{argv: "circuit status", want: &circuitStatusOptions{Project: projectFlags{dir: "."}}},
		{argv: "circuit status -C p --json", want: &circuitStatusOptions{Project: projectFlags{dir: "p", json: true}}},
		{argv: "circuit status p", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func circuitResetFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newCircuitResetCmd, []flagCase[circuitResetOptions]{
		{argv: "circuit reset", want: &circuitResetOptions{Project: projectFlags{dir: "."}}},
		{argv: "circuit reset -C p", want: &circuitResetOptions{Project: projectFlags{dir: "p"}}},
		{argv: "circuit reset --json", code: 1, says: "unknown flag: --json"},
	})
}

func sessionResetFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newSessionResetCmd, []flagCase[sessionResetOptions]{
		{argv: "session reset", want: &sessionResetOptions{Project: projectFlags{dir: "."}}},
		{argv: "session reset --dir p", want: &sessionResetOptions{Project: projectFlags{dir: "p"}}},
		{argv: "session reset now", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func pauseFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newPauseCmd, []flagCase[pauseOptions]{
		{argv: "pause", want: &pauseOptions{Project: projectFlags{dir: "."}}},
		{argv: "pause -C p", want: &pauseOptions{Project: projectFlags{dir: "p"}}},
		{argv: "pause 5m", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func resumeFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newResumeCmd, []flagCase[resumeOptions]{
		{argv: "resume", want: &resumeOptions{Project: projectFlags{dir: "."}}},
		{argv: "resume -C p", want: &resumeOptions{Project: projectFlags{dir: "p"}}},
		{argv: "resume --json", code: 1, says: "unknown flag: --json"},
	})
}

func stopFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newStopCmd, []flagCase[stopOptions]{
		{argv: "stop", want: &stopOptions{Project: projectFlags{dir: "."}}},
		{argv: "stop --wait 20m -C p", want: &stopOptions{Project: projectFlags{dir: "p"}, Wait: 20 * time.Minute}},
		{argv: "stop --wait 1h30m", want: &stopOptions{Project: projectFlags{dir: "."}, Wait: 90 * time.Minute}},
		{argv: "stop --wait=90s", want: &stopOptions{Project: projectFlags{dir: "."}, Wait: 90 * time.Second}},
		{argv: "stop --wait 20", code: 1, says: "missing unit in duration"},
		{argv: "stop now", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func monitorFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newMonitorCmd, []flagCase[monitorOptions]{
		{argv: "monitor", want: &monitorOptions{Project: projectFlags{dir: "."}}},
		{argv: "monitor -C p", want: &monitorOptions{Project: projectFlags{dir: "p"}}},
		{argv: "monitor --json", code: 1, says: "unknown flag: --json"},
	})
}

func analyzeFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newAnalyzeCmd, []flagCase[analyzeOptions]{
		{argv: "analyze", want: &analyzeOptions{ExitCode: -1}},
		{argv: "analyze -", want: &analyzeOptions{Path: "-", ExitCode: -1}},
		{argv: "analyze --json --exit-code 1 --now 2026-11-20T20:00:00Z --allowed-tools 'Write,Bash(git diff *)' --stderr err.log out.json",
			want: &analyzeOptions{Path: "out.json", JSON: true, ExitCode: 1, AllowedTools: "Write,Bash(git diff *)",
				Now: time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC), StderrPath: "err.log"}},
		{argv: "analyze --now yesterday out.json", code: 1, says: "want an RFC3339 time"},
		{argv: "analyze --exit-code x out.json", code: 1, says: "Run 'ralph --help' for usage."},
		{argv: "analyze a b", code: 1, says: "accepts at most 1 arg(s)"},
	})
}

func versionFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newVersionCmd, []flagCase[versionOptions]{
		{argv: "version", want: &versionOptions{}},
		{argv: "version --short", want: &versionOptions{Short: true}},
		{argv: "version 2", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func mcpBridgeFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newMCPBridgeCmd, []flagCase[mcpBridgeOptions]{
		{argv: "mcp-bridge", want: &mcpBridgeOptions{}},
		{argv: "mcp-bridge x", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func trustFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newTrustCmd, []flagCase[trustOptions]{
		{argv: "trust", want: &trustOptions{Project: projectFlags{dir: "."}}},
		{argv: "trust --revoke -C p", want: &trustOptions{Project: projectFlags{dir: "p"}, Revoke: true}},
		{argv: "trust --list", want: &trustOptions{Project: projectFlags{dir: "."}, List: true}},
		{argv: "trust --revoke --list", code: 1, says: "--revoke and --list cannot be combined"},
		{argv: "trust p", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

func demoFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newDemoCmd, []flagCase[demoOptions]{
		{argv: "demo", want: &demoOptions{Agent: "auto"}},
		{argv: "demo --keep --agent builtin --dir x --no-monitor", want: &demoOptions{Keep: true, Agent: "builtin", Dir: "x", NoMonitor: true}},
		{argv: "demo --agent claude", want: &demoOptions{Agent: "claude"}},
		{argv: "demo --serve --keep", want: &demoOptions{Agent: "auto", Serve: true, Keep: true}},
		{argv: "demo --agent codex", code: 1, says: `--agent "codex": want auto, claude or builtin`},
		{argv: "demo extra", code: 1, says: "Run 'ralph --help' for usage."},
	})
}

// The demo agent reads Claude Code's command line itself: ralph passes it
// on untouched.
func demoAgentFlagTest(t *testing.T, path string) {
	checkFlags(t, path, newDemoAgentCmd, []flagCase[demoAgentOptions]{
		{argv: demoAgentCmd, want: &demoAgentOptions{Args: []string{}}},
		{argv: demoAgentCmd + " -p --output-format stream-json --verbose 'do it'",
			want: &demoAgentOptions{Args: []string{"-p", "--output-format", "stream-json", "--verbose", "do it"}}},
	})
}

func serveFlagTest(t *testing.T, path string) {
	defaults := func(o serveOptions) *serveOptions {
		if o.Listen == "" {
			o.Listen = serve.DefaultListen
		}
		if o.MaxParallel == 0 {
			o.MaxParallel = 4
		}
		if o.TmuxTarget == "" {
			o.TmuxTarget = serve.DefaultWatchTarget
		}
		if o.WatchInterval == 0 {
			o.WatchInterval = serve.DefaultWatchInterval
		}
		if o.Backend == "" {
			o.Backend = "local"
		}
		if o.TemporalQueue == "" {
			o.TemporalQueue = temporal.DefaultQueue
		}
		if o.TemporalHeartbeat == 0 {
			o.TemporalHeartbeat = temporal.DefaultHeartbeat
		}
		if o.TemporalTakeoverAfter == 0 {
			o.TemporalTakeoverAfter = temporal.DefaultTakeoverAfter
		}
		if o.HistoryDays == 0 && !slices.Contains(o.Given, "history-days") {
			o.HistoryDays = serve.DefaultHistoryDays
		}
		return &o
	}
	abs, _ := filepath.Abs("src/web")
	checkFlags(t, path, newServeCmd, []flagCase[serveOptions]{
		{argv: "serve", want: defaults(serveOptions{})},
		{argv: "serve --home h --config c.conf --listen 127.0.0.1:9 --max-parallel 2 --session api=/src/api --session web=src/web",
			want: defaults(serveOptions{Home: "h", Config: "c.conf", Listen: "127.0.0.1:9", MaxParallel: 2,
				Sessions: []serve.Session{{Name: "api", Dir: "/src/api"}, {Name: "web", Dir: abs}},
				Given:    []string{"config", "home", "listen", "max-parallel", "session"}})},
		{argv: "serve --tmux-target 'agent-{session}' --tmux-socket /run/t.sock --watch-interval 500ms",
			want: defaults(serveOptions{TmuxTarget: "agent-{session}", TmuxSocket: "/run/t.sock", WatchInterval: 500 * time.Millisecond,
				Given: []string{"tmux-socket", "tmux-target", "watch-interval"}})},
		{argv: "serve --history-days 0", want: defaults(serveOptions{Given: []string{"history-days"}})},
		{argv: "serve --history-days 7", want: defaults(serveOptions{HistoryDays: 7, Given: []string{"history-days"}})},
		{argv: "serve --history-days -1", code: 1, says: "--history-days -1: want 0 (keep every task) or more"},
		{argv: "serve --watch-interval 0", want: &serveOptions{Listen: serve.DefaultListen, MaxParallel: 4, TmuxTarget: serve.DefaultWatchTarget, Given: []string{"watch-interval"}, HistoryDays: serve.DefaultHistoryDays,
			Backend: "local", TemporalQueue: temporal.DefaultQueue, TemporalHeartbeat: temporal.DefaultHeartbeat, TemporalTakeoverAfter: temporal.DefaultTakeoverAfter}},
		{argv: "serve --backend temporal --temporal-address 127.0.0.1:7233 --temporal-namespace ns --temporal-queue q --temporal-heartbeat 5s",
			want: defaults(serveOptions{Backend: "temporal", Temporal: temporal.Conn{Address: "127.0.0.1:7233", Namespace: "ns"}, TemporalQueue: "q",
				TemporalHeartbeat: 5 * time.Second,
				Given:             []string{"backend", "temporal-address", "temporal-heartbeat", "temporal-namespace", "temporal-queue"}})},
		{argv: "serve --backend temporal --temporal-address h:1 --temporal-pin api=host-a --temporal-pin web=host-b",
			want: defaults(serveOptions{Backend: "temporal", Temporal: temporal.Conn{Address: "h:1"}, TemporalPins: map[string]string{"api": "host-a", "web": "host-b"},
				Given: []string{"backend", "temporal-address", "temporal-pin"}})},
		{argv: "serve --backend temporal --temporal-address h:1 --temporal-pin api=host-a --temporal-handover origin --temporal-takeover-after 90s",
			want: defaults(serveOptions{Backend: "temporal", Temporal: temporal.Conn{Address: "h:1"}, TemporalPins: map[string]string{"api": "host-a"},
				TemporalHandover: "origin", TemporalTakeoverAfter: 90 * time.Second,
				Given: []string{"backend", "temporal-address", "temporal-handover", "temporal-pin", "temporal-takeover-after"}})},
		{argv: "serve --otel-endpoint http://collector:4318",
			want: defaults(serveOptions{OtelEndpoint: "http://collector:4318", Given: []string{"otel-endpoint"}})},
		{argv: "serve --backend temporal --temporal-address h:1 --temporal-takeover-after 0s", code: 1, says: "--temporal-takeover-after 0s: want a positive duration"},
		{argv: "serve --backend temporal --temporal-address cloud:7233 --temporal-tls",
			want: defaults(serveOptions{Backend: "temporal", Temporal: temporal.Conn{Address: "cloud:7233", TLS: true},
				Given: []string{"backend", "temporal-address", "temporal-tls"}})},
		{argv: "serve --temporal-pin api", code: 1, says: `--temporal-pin "api": want SESSION=QUEUE`},
		{argv: "serve --backend temporal", code: 1, says: "want --temporal-address HOST:PORT"},
		{argv: "serve --backend nomad", code: 1, says: `--backend "nomad": want local or temporal`},
		{argv: "serve --max-parallel 0", code: 1, says: "--max-parallel 0: want 1 or more"},
		{argv: "serve --max-connections 64", want: defaults(serveOptions{MaxConns: 64, Given: []string{"max-connections"}})},
		{argv: "serve --metrics-listen 10.0.0.5:9477", want: defaults(serveOptions{MetricsListen: "10.0.0.5:9477", Given: []string{"metrics-listen"}})},
		{argv: "serve --max-connections -1", code: 1, says: "--max-connections -1: want 1 or more, or 0 for the default"},
		{argv: "serve --tmux-target claude", code: 1, says: "want {session} in it"},
		{argv: "serve --watch-interval -1s", code: 1, says: "--watch-interval -1s"},
		{argv: "serve --session ../x=/a", code: 1, says: "--session: session \"../x\""},
		{argv: "serve --session x", code: 1, says: "want NAME=DIR"},
		{argv: "serve extra", code: 1, says: `unknown command "extra"`},
		{argv: "serve --max-paralel 2", code: 1, says: "did you mean --max-parallel?"},
	})
}

// taskFlagTest covers one verb of `ralph task`; the whole task command is
// rebuilt, as its flags are its parent's.
func taskFlagTest(cases []flagCase[taskOptions]) func(*testing.T, string) {
	return func(t *testing.T, _ string) { checkFlags(t, "task", newTaskCmd, cases) }
}

var taskFlagCases = map[string][]flagCase[taskOptions]{
	"task start": {
		{argv: "task start 5 Add the login page", want: &taskOptions{Verb: "start", Session: "5", Title: "Add the login page"}},
		{argv: "task --server http://127.0.0.1:9 start --json --home h api 'Fix it'",
			want: &taskOptions{Server: "http://127.0.0.1:9", Home: "h", JSON: true, Verb: "start", Session: "api", Title: "Fix it"}},
		{argv: "task start 5", code: 1, says: "requires at least 2 arg(s)"},
		{argv: "task start --loop 30 5 Add the login page", want: &taskOptions{Verb: "start", Session: "5", Title: "Add the login page", StartLoop: 30}},
		{argv: "task start --loop many 5 x", code: 1, says: "invalid argument"},
	},
	"task retry": {
		{argv: "task retry 5", want: &taskOptions{Verb: "retry", Session: "5"}},
		{argv: "task retry 5 20", want: &taskOptions{Verb: "retry", Session: "5", MaxLoops: 20}},
		{argv: "task retry", code: 1, says: "accepts between 1 and 2 arg(s)"},
	},
	"task circuit": {
		{argv: "task circuit 5 --json", want: &taskOptions{Verb: "circuit", Session: "5", JSON: true}},
		{argv: "task circuit", code: 1, says: "accepts 1 arg(s)"},
	},
	"task loop": {
		{argv: "task loop 5", want: &taskOptions{Verb: "loop", Session: "5"}},
		{argv: "task loop 5 30 --json", want: &taskOptions{Verb: "loop", Session: "5", MaxLoops: 30, JSON: true}},
		{argv: "task loop 5 ten", code: 1, says: `MAX "ten": want a whole number`},
		{argv: "task loop 5 0", code: 1, says: "1 or more"},
		{argv: "task loop 5 1 2", code: 1, says: "accepts between 1 and 2 arg(s)"},
	},
	"task status": {
		{argv: "task status", want: &taskOptions{Verb: "status"}},
		{argv: "task status 5 --json", want: &taskOptions{Verb: "status", Session: "5", JSON: true}},
		{argv: "task status 5 6", code: 1, says: "accepts at most 1 arg(s)"},
	},
	"task list": {
		{argv: "task list --json", want: &taskOptions{Verb: "list", JSON: true}},
		{argv: "task list 5", code: 1, says: `unknown command "5"`},
		{argv: "task list --all", want: &taskOptions{Verb: "list", History: historyOptions{All: true}}},
		{argv: "task list --session api --state done --origin github --since 7d",
			want: &taskOptions{Verb: "list", History: historyOptions{Session: "api", State: "done", Origin: "github", Since: "7d"}}},
		{argv: "task list --state finished", code: 1, says: `--state "finished": want queued, running`},
		{argv: "task list --origin fax", code: 1, says: `--origin "fax": want one of cli, api`},
		{argv: "task list --since soon", code: 1, says: `--since: "soon" is neither a duration`},
	},
	"task show": {
		{argv: "task show t12 --json", want: &taskOptions{Verb: "show", ID: "t12", JSON: true}},
		{argv: "task show", code: 1, says: "accepts 1 arg(s), received 0"},
	},
	"task stop": {
		{argv: "task stop 5", want: &taskOptions{Verb: "stop", Session: "5"}},
		{argv: "task stop", code: 1, says: "accepts 1 arg(s), received 0"},
	},
	"task cancel": {
		{argv: "task cancel web --json", want: &taskOptions{Verb: "cancel", Session: "web", JSON: true}},
		{argv: "task cancel", code: 1, says: "accepts 1 arg(s)"},
	},
	"task reset": {
		{argv: "task reset 5", want: &taskOptions{Verb: "reset", Session: "5"}},
		{argv: "task reset --jsn 5", code: 1, says: "unknown flag: --jsn"},
	},
	"task pause": {
		{argv: "task pause 5", want: &taskOptions{Verb: "pause", Session: "5"}},
		{argv: "task pause", code: 1, says: "accepts 1 arg(s)"},
	},
	"task resume": {
		{argv: "task resume 5 --json", want: &taskOptions{Verb: "resume", Session: "5", JSON: true}},
	},
	"task answer": {
		{argv: "task answer 5 Use SQLite, it is simpler", want: &taskOptions{Verb: "answer", Session: "5", Text: "Use SQLite, it is simpler"}},
		{argv: "task answer 5", code: 1, says: "requires at least 2 arg(s)"},
	},
	"task approve": {
		{argv: "task approve 5 a1", want: &taskOptions{Verb: "approve", Session: "5", Item: "a1"}},
		{argv: "task approve 5", code: 1, says: "accepts 2 arg(s)"},
	},
	"task deny": {
		{argv: "task deny 5 a1 not on a Friday", want: &taskOptions{Verb: "deny", Session: "5", Item: "a1", Text: "not on a Friday"}},
		{argv: "task deny 5 a1", want: &taskOptions{Verb: "deny", Session: "5", Item: "a1"}},
		{argv: "task deny 5", code: 1, says: "requires at least 2 arg(s)"},
	},
	"task watchdog": {
		{argv: "task watchdog --json", want: &taskOptions{Verb: "watchdog", JSON: true}},
		{argv: "task watchdog 5", code: 1, says: `unknown command "5"`},
	},
}

func workerFlagTest(t *testing.T, path string) {
	defaults := func(o workerOptions) *workerOptions {
		if o.Queue == "" {
			o.Queue = temporal.DefaultQueue
		}
		if o.MaxCalls == 0 {
			o.MaxCalls = 4
		}
		return &o
	}
	checkFlags(t, path, newWorkerCmd, []flagCase[workerOptions]{
		{argv: "worker --temporal-address 127.0.0.1:7233", want: defaults(workerOptions{Conn: temporal.Conn{Address: "127.0.0.1:7233"}})},
		{argv: "worker --temporal-address h:1 --temporal-namespace ns --queue q --host-queue host-a --home w --max-calls 2",
			want: defaults(workerOptions{Conn: temporal.Conn{Address: "h:1", Namespace: "ns"}, Queue: "q", HostQueue: "host-a", Home: "w", MaxCalls: 2})},
		{argv: "worker --temporal-address h:1 --accounts main,spare",
			want: defaults(workerOptions{Conn: temporal.Conn{Address: "h:1"}, Accounts: "main,spare"})},
		{argv: "worker --temporal-address h:1 --host-queue host-b --takeover /var/lib/ralph/takeover",
			want: defaults(workerOptions{Conn: temporal.Conn{Address: "h:1"}, HostQueue: "host-b", Takeover: "/var/lib/ralph/takeover"})},
		{argv: "worker --temporal-address cloud:7233 --temporal-namespace ns.acct --temporal-tls-ca ca.pem --temporal-tls-cert c.pem --temporal-tls-key k.pem --temporal-tls-server-name frontend",
			want: defaults(workerOptions{Conn: temporal.Conn{Address: "cloud:7233", Namespace: "ns.acct", CA: "ca.pem", Cert: "c.pem", Key: "k.pem", ServerName: "frontend"}})},
		{argv: "worker --temporal-address h:1 --otel-endpoint https://collector:4318",
			want: defaults(workerOptions{Conn: temporal.Conn{Address: "h:1"}, OtelEndpoint: "https://collector:4318"})},
		{argv: "worker --temporal-address h:1 --metrics-listen 127.0.0.1:9478",
			want: defaults(workerOptions{Conn: temporal.Conn{Address: "h:1"}, MetricsListen: "127.0.0.1:9478"})},
		{argv: "worker", code: 1, says: "--temporal-address: want HOST:PORT"},
		{argv: "worker --temporal-address h:1 --max-calls 0", code: 1, says: "--max-calls 0: want 1 or more"},
		{argv: "worker extra --temporal-address h:1", code: 1, says: `unknown command "extra"`},
	})
}
