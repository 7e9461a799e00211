package config

// The key table: every .ralphrc key ralph understands, in template order.
// Defaults() parses each Default, so a default and its doc can never drift.
// Keys and defaults marked OriginBash/OriginBashEnv come from frankbria's
// ralph-claude-code (ralph_loop.sh, lib/circuit_breaker.sh, lib/ralphrc.sh,
// templates/ralphrc.template); where ralph deviates, the Doc or the package
// doc says so.

// DefaultAllowedTools is the bash tool's default ALLOWED_TOOLS: specific git
// subcommands only, because a broad Bash(git *) lets the agent run git clean
// or git rm and delete .ralph/ (its issue #149).
const DefaultAllowedTools = "Write,Read,Edit,Bash(git add *),Bash(git commit *),Bash(git diff *)," +
	"Bash(git log *),Bash(git status),Bash(git status *),Bash(git push *),Bash(git pull *)," +
	"Bash(git fetch *),Bash(git checkout *),Bash(git branch *),Bash(git stash *)," +
	"Bash(git merge *),Bash(git tag *),Bash(npm *),Bash(pytest)"

// DefaultOptionalSections are the fix_plan.md headings whose unchecked items
// do not block a plan-complete exit (the bash tool's issue #239).
const DefaultOptionalSections = "Optional,Future,Future Enhancements,Nice to Have"

const (
	gProject = "Project"
	gAgent   = "Agent"
	gLimits  = "Limits and pacing"
	gBreaker = "Circuit breaker"
	gExit    = "Exit detection"
	gOutput  = "Output"
	gGitHub  = "GitHub issue lifecycle"
	gSandbox = "Sandbox"
)

// providerCommand is the executable run for an AGENT_PROVIDER when no agent
// command is configured. "command" has none: the user must give one.
func providerCommand(provider string) string {
	if provider == "command" {
		return ""
	}
	return provider // claude, codex, gemini and opencode are named after their CLIs
}

var keyTable = []keyInfo{
	// Project
	{Name: "PROJECT_NAME", kind: kString, Group: gProject, Origin: OriginBash,
		Doc: "Project name in the dashboard's title (empty: the directory name).", field: func(c *Config) any { return &c.ProjectName }},
	{Name: "PROJECT_TYPE", kind: kInert, Group: gProject, Origin: OriginBash,
		Doc: "Written by the bash tool and ralph enable for people to read; no effect (ralph detects the stack itself)."},
	{Name: "RALPH_DIR", kind: kString, Default: ".ralph", Group: gProject, Origin: OriginBashEnv,
		policy: rcStockOnly, stock: []string{".ralph"},
		Doc: "Directory holding ralph's state, logs and prompt (environment only).", field: func(c *Config) any { return &c.RalphDir }},
	{Name: "PROMPT_FILE", kind: kString, Flag: "--prompt", Group: gProject, Origin: OriginBash, policy: rcInProject,
		Doc: "Prompt file for each iteration (empty: RALPH_DIR/PROMPT.md).", field: func(c *Config) any { return &c.PromptFile }},
	{Name: "FIX_PLAN_FILE", kind: kInert, Group: gProject, Origin: OriginBash,
		Doc: "Written by the bash tool's setup for reference only; no effect."},
	{Name: "AGENT_FILE", kind: kInert, Group: gProject, Origin: OriginBash,
		Doc: "Written by the bash tool's setup for reference only; no effect."},
	{Name: "TASK_SOURCES", unsupported: "task import is chosen by flags (ralph enable --from-…, ralph import --github-…)", kind: kList, Default: "local", Group: gProject, Origin: OriginBash,
		Doc: "Where import takes tasks from: local, beads, github.", field: func(c *Config) any { return &c.TaskSources }},
	{Name: "GITHUB_TASK_LABEL", unsupported: "use ralph enable --from-github-label or ralph import --github-label", kind: kString, Default: "ralph-task", Group: gProject, Origin: OriginBash,
		Doc: "GitHub label of issues to import when TASK_SOURCES has github.", field: func(c *Config) any { return &c.GitHubTaskLabel }},
	{Name: "BEADS_FILTER", unsupported: "beads task import is not implemented", kind: kString, Default: "status:open", Group: gProject, Origin: OriginBash,
		Doc: "Beads filter for task import when TASK_SOURCES has beads.", field: func(c *Config) any { return &c.BeadsFilter }},

	// Agent
	{Name: "AGENT_PROVIDER", kind: kEnum, Values: []string{"claude", "codex", "gemini", "opencode", "command"},
		Default: "claude", Flag: "--agent", Group: gAgent, Origin: OriginNew,
		Doc: "Which agent CLI runs each iteration.", field: func(c *Config) any { return &c.AgentProvider }},
	{Name: "AGENT_CMD", Aliases: []string{"CLAUDE_CODE_CMD"}, kind: kCommand, Default: "claude", Flag: "--agent-cmd",
		Group: gAgent, Origin: OriginNew, policy: rcWarnCustom, stock: []string{"claude", "npx @anthropic-ai/claude-code"},
		Doc: "Agent executable and leading arguments, split like shell words but never run by a shell " +
			"(default: the provider's own command).", field: func(c *Config) any { return &c.AgentCmd }},
	{Name: "FALLBACK_AGENTS", kind: kList, Flag: "--fallback-agent", Group: gAgent, Origin: OriginNew,
		check: checkAgents, Doc: "Agents to continue with, in order, while the main one is held by a usage limit " +
			"(e.g. codex,gemini); ralph switches back once its limit resets.", field: func(c *Config) any { return &c.FallbackAgents }},
	{Name: "CODEX_CMD", kind: kCommand, Default: "codex", Group: gAgent, Origin: OriginNew, policy: rcWarnCustom, stock: []string{"codex"},
		Doc: "Codex executable when it is not the main agent (AGENT_CMD sets the main agent's).", field: func(c *Config) any { return &c.CodexCmd }},
	{Name: "GEMINI_CMD", kind: kCommand, Default: "gemini", Group: gAgent, Origin: OriginNew, policy: rcWarnCustom, stock: []string{"gemini"},
		Doc: "Gemini CLI executable when it is not the main agent.", field: func(c *Config) any { return &c.GeminiCmd }},
	{Name: "OPENCODE_CMD", kind: kCommand, Default: "opencode", Group: gAgent, Origin: OriginNew, policy: rcWarnCustom, stock: []string{"opencode"},
		Doc: "OpenCode executable when it is not the main agent.", field: func(c *Config) any { return &c.OpencodeCmd }},
	{Name: "CODEX_MODEL", kind: kString, Group: gAgent, Origin: OriginNew,
		Doc: "Model for Codex (empty: its default).", field: func(c *Config) any { return &c.CodexModel }},
	{Name: "GEMINI_MODEL", kind: kString, Group: gAgent, Origin: OriginNew,
		Doc: "Model for the Gemini CLI (empty: its default).", field: func(c *Config) any { return &c.GeminiModel }},
	{Name: "OPENCODE_MODEL", kind: kString, Group: gAgent, Origin: OriginNew,
		Doc: "Model for OpenCode as provider/model (empty: its default).", field: func(c *Config) any { return &c.OpencodeModel }},
	{Name: "CLAUDE_ARGS", kind: kCommand, Group: gAgent, Origin: OriginNew, policy: rcWarnCustom,
		Doc: "Extra arguments for Claude Code, split like shell words.", field: func(c *Config) any { return &c.ClaudeArgs }},
	{Name: "CODEX_ARGS", kind: kCommand, Group: gAgent, Origin: OriginNew, policy: rcWarnCustom,
		Doc: "Extra arguments for codex exec.", field: func(c *Config) any { return &c.CodexArgs }},
	{Name: "GEMINI_ARGS", kind: kCommand, Group: gAgent, Origin: OriginNew, policy: rcWarnCustom,
		Doc: "Extra arguments for the Gemini CLI.", field: func(c *Config) any { return &c.GeminiArgs }},
	{Name: "OPENCODE_ARGS", kind: kCommand, Group: gAgent, Origin: OriginNew, policy: rcWarnCustom,
		Doc: "Extra arguments for opencode run.", field: func(c *Config) any { return &c.OpencodeArgs }},
	{Name: "CODEX_SANDBOX", kind: kEnum, Values: []string{"read-only", "workspace-write", "danger-full-access"}, Default: "workspace-write",
		Group: gAgent, Origin: OriginNew, policy: rcWarnCustom, stock: []string{"read-only", "workspace-write"},
		Doc: "Codex sandbox: what its commands may touch (it has no tool allow-list).", field: func(c *Config) any { return &c.CodexSandbox }},
	{Name: "GEMINI_APPROVAL_MODE", kind: kEnum, Values: []string{"default", "auto_edit", "yolo", "plan"}, Default: "yolo",
		Group: gAgent, Origin: OriginNew,
		Doc: "Gemini CLI approval mode; without yolo it gets no shell tool when nobody is there to approve.", field: func(c *Config) any { return &c.GeminiApprovalMode }},
	{Name: "COMMAND_PROMPT_MODE", kind: kEnum, Values: []string{"stdin", "arg"}, Default: "stdin", Group: gAgent, Origin: OriginNew,
		Doc: "How AGENT_PROVIDER=command gets the prompt: on stdin, or as its last argument.", field: func(c *Config) any { return &c.CommandPromptMode }},
	{Name: "CLAUDE_MODEL", kind: kString, Flag: "--model", Group: gAgent, Origin: OriginBash,
		Doc: "Model override passed to the agent (empty: the agent's default).", field: func(c *Config) any { return &c.Model }},
	{Name: "CLAUDE_EFFORT", kind: kString, Flag: "--effort", Group: gAgent, Origin: OriginBash,
		Doc: "Effort level passed to the agent, e.g. low or high (empty: the agent's default).", field: func(c *Config) any { return &c.Effort }},
	{Name: "CLAUDE_OUTPUT_FORMAT", kind: kEnum, Values: []string{"json", "text", "stream-json"}, Default: "json",
		Flag: "--output-format", Group: gAgent, Origin: OriginBash,
		Doc: "Agent output format: json (structured), stream-json or text (legacy).", field: func(c *Config) any { return &c.OutputFormat }},
	{Name: "CLAUDE_TIMEOUT_MINUTES", kind: kMinutes, min: 1, Default: "15", Flag: "--timeout", Group: gAgent, Origin: OriginBash,
		Doc: "Minutes one agent call may run before it is stopped.", field: func(c *Config) any { return &c.AgentTimeout }},
	{Name: "APPROVAL_TIMEOUT", kind: kDuration, Default: "30m", Group: gAgent, Origin: OriginNew,
		Doc: "How long an agent call waits inside the call for a person's answer or decision (ralph serve) before it goes on without one.", field: func(c *Config) any { return &c.ApprovalTimeout }},
	{Name: "ALLOWED_TOOLS", Aliases: []string{"CLAUDE_ALLOWED_TOOLS"}, kind: kList, Default: "",
		Flag: "--allowed-tools", Group: gAgent, Origin: OriginBash,
		Doc: "Tools the agent may use, comma separated; commas inside (...) do not split. Empty: the agent's granular default (file tools, git commands that cannot destroy work, test runners).", field: func(c *Config) any { return &c.AllowedTools }},
	{Name: "SESSION_CONTINUITY", Aliases: []string{"CLAUDE_USE_CONTINUE"}, kind: kBool, Default: "true",
		Flag: "--no-continue", Group: gAgent, Origin: OriginBash,
		Doc: "Continue the agent's session across iterations (--no-continue turns it off).", field: func(c *Config) any { return &c.SessionContinuity }},
	{Name: "SESSION_EXPIRY_HOURS", Aliases: []string{"CLAUDE_SESSION_EXPIRY_HOURS"}, kind: kHours, min: 1, Default: "24",
		Flag: "--session-expiry", Group: gAgent, Origin: OriginBash,
		Doc: "Hours after which a session is dropped and a fresh one starts.", field: func(c *Config) any { return &c.SessionExpiry }},
	{Name: "CLAUDE_AUTO_UPDATE", unsupported: "ralph never updates the agent CLI; update it yourself", kind: kBool, Default: "false", Group: gAgent, Origin: OriginBash,
		Doc: "Update the agent CLI at start-up (the bash tool defaulted to true; ralph never updates unasked).", field: func(c *Config) any { return &c.AutoUpdate }},
	{Name: "CLAUDE_MIN_VERSION", kind: kString, Default: "2.0.76", Group: gAgent, Origin: OriginBash,
		check: checkRE(versionRE, "a version like 2.0.76"), Doc: "Oldest agent CLI version ralph accepts.", field: func(c *Config) any { return &c.MinAgentVersion }},
	{Name: "RALPH_SHELL_INIT_FILE", unsupported: "ralph runs the agent without a shell and sources nothing", kind: kString, Group: gAgent, Origin: OriginBash, policy: rcStockOnly,
		Doc: "Shell file to source before the agent runs (environment only: it runs code).", field: func(c *Config) any { return &c.ShellInitFile }},
	{Name: "LIVE_SHOW_TOOL_ARGS", unsupported: "the live view always shows each tool call's target", kind: kBool, Default: "false", Group: gAgent, Origin: OriginBash,
		Doc: "Show tool arguments (commands, paths) in live output.", field: func(c *Config) any { return &c.ShowToolArgs }},

	// Limits and pacing
	{Name: "MAX_CALLS_PER_HOUR", kind: kInt, min: 1, Default: "100", Flag: "--calls", Group: gLimits, Origin: OriginBash,
		Doc: "Agent calls allowed per hour.", field: func(c *Config) any { return &c.MaxCallsPerHour }},
	{Name: "MAX_TOKENS_PER_HOUR", kind: kInt, Default: "0", Flag: "--max-tokens", Group: gLimits, Origin: OriginBash,
		Doc: "Input+output tokens allowed per hour (0: no token limit).", field: func(c *Config) any { return &c.MaxTokensPerHour }},
	{Name: "MAX_LOOPS", kind: kInt, Default: "0", Flag: "--max-loops", Group: gLimits, Origin: OriginNew,
		Doc: "Stop after this many iterations (0: no limit).", field: func(c *Config) any { return &c.MaxLoops }},
	{Name: "MAX_RUNTIME", kind: kDuration, Default: "0s", Flag: "--max-runtime", Group: gLimits, Origin: OriginNew,
		Doc: "Stop after running this long, e.g. 8h (0: no limit).", field: func(c *Config) any { return &c.MaxRuntime }},
	{Name: "MAX_COST", kind: kFloat, Default: "0", Flag: "--max-cost", Group: gLimits, Origin: OriginNew,
		Doc: "Stop once the agent's reported cost reaches this many USD (0: no limit).", field: func(c *Config) any { return &c.MaxCost }},
	{Name: "DELAY", kind: kDuration, Default: "5s", Flag: "--delay", Group: gLimits, Origin: OriginNew,
		Doc: "Pause between iterations (the bash tool slept 5s).", field: func(c *Config) any { return &c.Delay }},
	{Name: "FAILURE_BACKOFF", kind: kDuration, Default: "30s", Flag: "--failure-backoff", Group: gLimits, Origin: OriginNew,
		Doc: "Pause after a failed agent call (the bash tool slept 30s).", field: func(c *Config) any { return &c.FailureBackoff }},
	{Name: "USAGE_LIMIT_WAIT_MINUTES", kind: kMinutes, min: 1, Default: "60", Group: gLimits, Origin: OriginNew,
		Doc: "Minutes to wait on a usage limit whose reset time is unknown.", field: func(c *Config) any { return &c.UsageLimitWait }},
	{Name: "USAGE_LIMIT_MARGIN", kind: kDuration, Default: "1m", Group: gLimits, Origin: OriginNew,
		Doc: "Extra wait after a usage limit's reset time, so the first call after it is not refused again.", field: func(c *Config) any { return &c.UsageLimitMargin }},
	{Name: "ON_USAGE_LIMIT", kind: kEnum, Values: []string{"wait", "exit"}, Default: "wait", Flag: "--on-usage-limit",
		Group: gLimits, Origin: OriginNew,
		Doc: "On a usage limit: wait for the reset, or exit (code 4).", field: func(c *Config) any { return &c.OnUsageLimit }},
	{Name: "DRY_RUN", kind: kBool, Default: "false", Flag: "--dry-run", Group: gLimits, Origin: OriginBashEnv,
		Doc: "Go through the loop without calling the agent.", field: func(c *Config) any { return &c.DryRun }},

	// Circuit breaker
	{Name: "CB_NO_PROGRESS_THRESHOLD", kind: kInt, min: 1, Default: "3", Group: gBreaker, Origin: OriginBash,
		Doc: "Open the circuit after this many iterations without progress.", field: func(c *Config) any { return &c.Breaker.NoProgressThreshold }},
	{Name: "CB_SAME_ERROR_THRESHOLD", kind: kInt, min: 1, Default: "5", Group: gBreaker, Origin: OriginBash,
		Doc: "Open the circuit after this many iterations with the same error.", field: func(c *Config) any { return &c.Breaker.SameErrorThreshold }},
	{Name: "CB_OUTPUT_DECLINE_THRESHOLD", kind: kInt, min: 0, max: 100, Default: "70", Group: gBreaker, Origin: OriginBash,
		Doc: "Open the circuit when output shrinks by more than this percentage.", field: func(c *Config) any { return &c.Breaker.OutputDeclineThreshold }},
	{Name: "CB_PERMISSION_DENIAL_THRESHOLD", kind: kInt, min: 1, Default: "2", Group: gBreaker, Origin: OriginBash,
		Doc: "Stop after this many iterations with permission denials.", field: func(c *Config) any { return &c.Breaker.PermissionDenialThreshold }},
	{Name: "CB_FAILURE_THRESHOLD", kind: kInt, min: 1, Default: "5", Group: gBreaker, Origin: OriginNew,
		Doc: "Open the circuit after this many failed agent calls in a row.", field: func(c *Config) any { return &c.Breaker.FailureThreshold }},
	{Name: "CB_COOLDOWN_MINUTES", kind: kMinutes, Default: "30", Group: gBreaker, Origin: OriginBash,
		Doc: "Minutes an open circuit waits before trying again (0: at once).", field: func(c *Config) any { return &c.Breaker.Cooldown }},
	{Name: "CB_AUTO_RESET", kind: kBool, Default: "false", Flag: "--auto-reset-circuit", Group: gBreaker, Origin: OriginBash,
		Doc: "Close an open circuit at start-up instead of waiting for the cooldown.", field: func(c *Config) any { return &c.Breaker.AutoReset }},

	// Exit detection
	{Name: "MAX_CONSECUTIVE_TEST_LOOPS", kind: kInt, min: 1, Default: "3", Group: gExit, Origin: OriginBash,
		Doc: "Stop after this many test-only iterations in a row.", field: func(c *Config) any { return &c.MaxConsecutiveTestLoops }},
	{Name: "MAX_CONSECUTIVE_DONE_SIGNALS", kind: kInt, min: 1, Default: "2", Group: gExit, Origin: OriginBash,
		Doc: "Stop after this many completion signals in a row.", field: func(c *Config) any { return &c.MaxConsecutiveDoneSignals }},
	{Name: "TEST_PERCENTAGE_THRESHOLD", unsupported: "test-only iterations are bounded by MAX_CONSECUTIVE_TEST_LOOPS", kind: kInt, min: 0, max: 100, Default: "30", Group: gExit, Origin: OriginBash,
		Doc: "Flag when more than this percentage of recent iterations only ran tests.", field: func(c *Config) any { return &c.TestPercentageThreshold }},
	{Name: "OPTIONAL_SECTIONS", kind: kList, Default: DefaultOptionalSections, emptyOK: true, Group: gExit, Origin: OriginBash,
		Doc: "fix_plan.md headings whose unchecked items do not block completion (empty: none).", field: func(c *Config) any { return &c.OptionalSections }},
	{Name: "NO_CLARIFY", kind: kBool, Default: "false", Flag: "--no-clarify", Group: gExit, Origin: OriginNew,
		Doc: "Keep going when the agent asks for clarification instead of stopping (code 6).", field: func(c *Config) any { return &c.NoClarify }},
	{Name: "VERIFY_CMD", kind: kString, Flag: "--verify-cmd", Group: gExit, Origin: OriginNew, policy: rcWarnCustom,
		Doc: "The project's check, run by ralph itself through sh (in the sandbox when one is set) before it accepts a completion: " +
			"exit 0 lets it stand; anything else sends the agent back with the output's end (empty: completions are not checked).",
		field: func(c *Config) any { return &c.VerifyCmd }},
	{Name: "VERIFY_TIMEOUT", kind: kDuration, Default: "10m", Group: gExit, Origin: OriginNew,
		Doc: "How long one run of VERIFY_CMD may take; a run that takes longer fails.", field: func(c *Config) any { return &c.VerifyTimeout }},
	{Name: "VERIFY_MAX_FAILURES", kind: kInt, min: 1, Default: "3", Group: gExit, Origin: OriginNew,
		Doc:   "Completion claims in a row that may fail VERIFY_CMD before the run ends with verify_failed (code 9).",
		field: func(c *Config) any { return &c.VerifyMaxFailures }},

	// Output
	{Name: "VERBOSE", Aliases: []string{"RALPH_VERBOSE", "VERBOSE_PROGRESS"}, kind: kBool, Default: "false", Flag: "--verbose",
		Group: gOutput, Origin: OriginNew, Doc: "Log detailed progress.", field: func(c *Config) any { return &c.Verbose }},
	{Name: "LIVE", kind: kBool, Default: "false", Flag: "--live", Group: gOutput, Origin: OriginNew,
		Doc: "Stream the agent's output while it runs.", field: func(c *Config) any { return &c.Live }},
	{Name: "NOTIFY", Aliases: []string{"ENABLE_NOTIFICATIONS"}, kind: kBool, Default: "false", Flag: "--notify",
		Group: gOutput, Origin: OriginNew, Doc: "Send desktop notifications on key events.", field: func(c *Config) any { return &c.Notify }},
	{Name: "BACKUP", Aliases: []string{"ENABLE_BACKUP"}, kind: kBool, Default: "false", Flag: "--backup",
		Group: gOutput, Origin: OriginNew, Doc: "Make a git backup branch before each iteration.", field: func(c *Config) any { return &c.Backup }},

	// GitHub issue lifecycle
	{Name: "GITHUB_ISSUE", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kString, Group: gGitHub, Origin: OriginBash,
		Doc: "Issue to track: N, #N, owner/repo#N or a URL (enables the keys below).", field: func(c *Config) any { return &c.GitHub.Issue }},
	{Name: "COMMENT_PROGRESS", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kBool, Default: "false", Group: gGitHub, Origin: OriginBash,
		Doc: "Post progress comments on the issue.", field: func(c *Config) any { return &c.GitHub.CommentProgress }},
	{Name: "COMMENT_INTERVAL", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kInt, min: 1, Default: "5", Group: gGitHub, Origin: OriginBash,
		Doc: "Post a progress comment every this many iterations.", field: func(c *Config) any { return &c.GitHub.CommentInterval }},
	{Name: "AUTO_CLOSE", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kBool, Default: "false", Group: gGitHub, Origin: OriginBash,
		Doc: "Close the issue when the work completes.", field: func(c *Config) any { return &c.GitHub.AutoClose }},
	{Name: "CLOSE_SUMMARY", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kBool, Default: "false", Group: gGitHub, Origin: OriginBash,
		Doc: "Post a summary comment on completion.", field: func(c *Config) any { return &c.GitHub.CloseSummary }},
	{Name: "CREATE_PR", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kBool, Default: "false", Group: gGitHub, Origin: OriginBash,
		Doc: "Open a pull request on completion.", field: func(c *Config) any { return &c.GitHub.CreatePR }},
	{Name: "LINK_ISSUE", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kBool, Default: "false", Group: gGitHub, Origin: OriginBash,
		Doc: `Add "Closes #N" to the pull request.`, field: func(c *Config) any { return &c.GitHub.LinkIssue }},
	{Name: "DRAFT_PR", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kBool, Default: "false", Group: gGitHub, Origin: OriginBash,
		Doc: "Open the pull request as a draft.", field: func(c *Config) any { return &c.GitHub.DraftPR }},
	{Name: "CREATE_FOLLOWUPS", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kBool, Default: "false", Group: gGitHub, Origin: OriginBash,
		Doc: "Open follow-up issues for TODO/FIXME markers added during the run.", field: func(c *Config) any { return &c.GitHub.CreateFollowups }},
	{Name: "FOLLOWUP_LABEL", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kString, Default: "tech-debt", Group: gGitHub, Origin: OriginBash,
		Doc: "Label for follow-up issues.", field: func(c *Config) any { return &c.GitHub.FollowupLabel }},
	{Name: "ADD_COMPLETION_LABELS", unsupported: "the GitHub issue lifecycle (comments, closing, pull requests, follow-ups) is not implemented", kind: kList, Group: gGitHub, Origin: OriginBash,
		Doc: "Labels added to the issue on completion, comma separated.", field: func(c *Config) any { return &c.GitHub.CompletionLabels }},

	// Sandbox
	{Name: "SANDBOX_PROVIDER", kind: kEnum, Values: []string{"bwrap", "agent", "docker", "podman", "e2b"}, Group: gSandbox, Origin: OriginBash,
		Doc: "Run the agent confined: bwrap (Linux bubblewrap: project writable, its git settings read-only, rest read-only, home and ralph's files hidden, " +
			"private /tmp), or agent (the agent's own sandbox, where there is no bubblewrap: Claude Code's sandbox " +
			"settings, Codex's --sandbox; its commands are confined, not its reads). docker, podman and e2b are refused at start. Empty: on the host.", field: func(c *Config) any { return &c.Sandbox.Provider }},
	{Name: "SANDBOX_NETWORK", kind: kEnum, Values: []string{"on", "none"}, Default: "on", Group: gSandbox, Origin: OriginNew,
		Doc: "Network inside the sandbox: on (the agent reaches its API) or none.", field: func(c *Config) any { return &c.Sandbox.Network }},
	{Name: "SANDBOX_DOCKER_IMAGE", unsupported: "container sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kString, Default: "ralph-sandbox:latest", Group: gSandbox,
		Origin: OriginBash, policy: rcStockOnly, stock: []string{"ralph-sandbox:latest", "ghcr.io/frankbria/ralph-sandbox:latest"},
		Doc: "Docker image of the sandbox (custom images: environment or flag only).", field: func(c *Config) any { return &c.Sandbox.DockerImage }},
	{Name: "SANDBOX_DOCKER_MEMORY", unsupported: "container sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kString, Default: "4g", Group: gSandbox, Origin: OriginBash,
		check: checkRE(memoryRE, "a Docker memory size like 4g or 512m"), Doc: "Memory limit of the Docker sandbox.", field: func(c *Config) any { return &c.Sandbox.DockerMemory }},
	{Name: "SANDBOX_DOCKER_CPUS", unsupported: "container sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kString, Default: "2", Group: gSandbox, Origin: OriginBash,
		check: checkRE(cpusRE, "a CPU count like 2 or 1.5"), Doc: "CPU limit of the Docker sandbox.", field: func(c *Config) any { return &c.Sandbox.DockerCPUs }},
	{Name: "SANDBOX_DOCKER_NETWORK", unsupported: "container sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kEnum, Values: []string{"bridge", "none", "host"}, Default: "bridge",
		Group: gSandbox, Origin: OriginBash, policy: rcStockOnly, stock: []string{"bridge", "none"},
		Doc: "Docker sandbox network: bridge, none or host (host: environment or flag only).", field: func(c *Config) any { return &c.Sandbox.DockerNetwork }},
	{Name: "SANDBOX_E2B_TEMPLATE", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kString, Default: "base", Group: gSandbox, Origin: OriginBash,
		policy: rcStockOnly, stock: []string{"base"},
		Doc: "E2B template (custom templates: environment or flag only).", field: func(c *Config) any { return &c.Sandbox.E2BTemplate }},
	{Name: "SANDBOX_E2B_SANDBOX_ID", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kString, Group: gSandbox, Origin: OriginBash, policy: rcStockOnly,
		Doc: "Reconnect to this E2B sandbox (environment or flag only).", field: func(c *Config) any { return &c.Sandbox.E2BSandboxID }},
	{Name: "SANDBOX_E2B_TIMEOUT", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kSeconds, min: 1, Default: "3600", Group: gSandbox, Origin: OriginBash,
		Doc: "E2B session timeout in seconds.", field: func(c *Config) any { return &c.Sandbox.E2BTimeout }},
	{Name: "SANDBOX_E2B_KEEP_ALIVE", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kBool, Default: "false", Group: gSandbox, Origin: OriginBash,
		Doc: "Leave the E2B sandbox running on exit.", field: func(c *Config) any { return &c.Sandbox.E2BKeepAlive }},
	{Name: "SANDBOX_E2B_MAX_COST", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kFloat, Default: "0", Group: gSandbox, Origin: OriginBash,
		Doc: "Stop once the estimated E2B cost reaches this many USD (0: no limit).", field: func(c *Config) any { return &c.Sandbox.E2BMaxCost }},
	{Name: "SANDBOX_E2B_COST_ALERT", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kFloat, Default: "0", Group: gSandbox, Origin: OriginBash,
		Doc: "Warn once the estimated E2B cost reaches this many USD (0: never).", field: func(c *Config) any { return &c.Sandbox.E2BCostAlert }},
	{Name: "SANDBOX_E2B_COST_PER_HOUR", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kFloat, Default: "0.10", Group: gSandbox, Origin: OriginBash,
		Doc: "Estimated E2B price per hour in USD, for cost tracking.", field: func(c *Config) any { return &c.Sandbox.E2BCostPerHour }},
	{Name: "SYNC_INCLUDE", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kList, Group: gSandbox, Origin: OriginBash,
		Doc: "Only upload files matching these patterns to an E2B sandbox.", field: func(c *Config) any { return &c.Sandbox.SyncInclude }},
	{Name: "SYNC_EXCLUDE", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kList, Group: gSandbox, Origin: OriginBash,
		Doc: "Never sync files matching these patterns with an E2B sandbox.", field: func(c *Config) any { return &c.Sandbox.SyncExclude }},
	{Name: "SYNC_MAX_FILE_SIZE", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kInt, Default: "10485760", Group: gSandbox, Origin: OriginBash,
		Doc: "Upload size threshold in bytes (0: unlimited).", field: func(c *Config) any { return &c.Sandbox.SyncMaxFileSize }},
	{Name: "SYNC_LARGE_FILE_ACTION", unsupported: "E2B sandboxes are not supported; SANDBOX_PROVIDER=bwrap is", kind: kEnum, Values: []string{"warn", "skip"}, Default: "warn", Group: gSandbox, Origin: OriginBash,
		Doc: "What to do with files over SYNC_MAX_FILE_SIZE: warn (upload) or skip.", field: func(c *Config) any { return &c.Sandbox.SyncLargeFileAct }},
}
