package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"ralph/internal/shellwords"
)

// Config is ralph's resolved configuration: plain typed values, decided once
// by Resolve. The comment on each field names its .ralphrc key; Describe has
// the defaults and docs.
type Config struct {
	// Project
	ProjectName     string   // PROJECT_NAME
	RalphDir        string   // RALPH_DIR
	PromptFile      string   // PROMPT_FILE; empty means RalphDir/PROMPT.md (see PromptPath)
	TaskSources     []string // TASK_SOURCES
	GitHubTaskLabel string   // GITHUB_TASK_LABEL
	BeadsFilter     string   // BEADS_FILTER

	// Agent
	AgentProvider     string        // AGENT_PROVIDER
	AgentCmd          string        // AGENT_CMD / CLAUDE_CODE_CMD; split with AgentArgv
	Model             string        // CLAUDE_MODEL
	Effort            string        // CLAUDE_EFFORT
	OutputFormat      string        // CLAUDE_OUTPUT_FORMAT
	AgentTimeout      time.Duration // CLAUDE_TIMEOUT_MINUTES
	ApprovalTimeout   time.Duration // APPROVAL_TIMEOUT
	AllowedTools      []string      // ALLOWED_TOOLS
	SessionContinuity bool          // SESSION_CONTINUITY
	SessionExpiry     time.Duration // SESSION_EXPIRY_HOURS
	AutoUpdate        bool          // CLAUDE_AUTO_UPDATE
	MinAgentVersion   string        // CLAUDE_MIN_VERSION
	ShellInitFile     string        // RALPH_SHELL_INIT_FILE
	ShowToolArgs      bool          // LIVE_SHOW_TOOL_ARGS

	// Other agents: fallbacks and per-agent settings (see AgentCommand,
	// AgentModel, AgentExtraArgs).
	FallbackAgents     []string // FALLBACK_AGENTS
	ClaudeCmd          string   // CLAUDE_CODE_CMD when another agent is the main one
	CodexCmd           string   // CODEX_CMD
	GeminiCmd          string   // GEMINI_CMD
	OpencodeCmd        string   // OPENCODE_CMD
	CodexModel         string   // CODEX_MODEL
	GeminiModel        string   // GEMINI_MODEL
	OpencodeModel      string   // OPENCODE_MODEL
	ClaudeArgs         string   // CLAUDE_ARGS
	CodexArgs          string   // CODEX_ARGS
	GeminiArgs         string   // GEMINI_ARGS
	OpencodeArgs       string   // OPENCODE_ARGS
	CodexSandbox       string   // CODEX_SANDBOX
	GeminiApprovalMode string   // GEMINI_APPROVAL_MODE
	CommandPromptMode  string   // COMMAND_PROMPT_MODE

	// Limits and pacing
	MaxCallsPerHour  int           // MAX_CALLS_PER_HOUR
	MaxTokensPerHour int           // MAX_TOKENS_PER_HOUR; 0 = no token limit
	MaxLoops         int           // MAX_LOOPS; 0 = no limit
	MaxRuntime       time.Duration // MAX_RUNTIME; 0 = no limit
	MaxCost          float64       // MAX_COST in USD; 0 = no limit
	Delay            time.Duration // DELAY between iterations
	FailureBackoff   time.Duration // FAILURE_BACKOFF after a failed agent call
	UsageLimitWait   time.Duration // USAGE_LIMIT_WAIT_MINUTES when no reset time is known
	UsageLimitMargin time.Duration // USAGE_LIMIT_MARGIN after a known reset time
	OnUsageLimit     string        // ON_USAGE_LIMIT: "wait" or "exit"
	DryRun           bool          // DRY_RUN

	Breaker BreakerConfig

	// Exit detection
	MaxConsecutiveTestLoops   int      // MAX_CONSECUTIVE_TEST_LOOPS
	MaxConsecutiveDoneSignals int      // MAX_CONSECUTIVE_DONE_SIGNALS
	TestPercentageThreshold   int      // TEST_PERCENTAGE_THRESHOLD
	OptionalSections          []string // OPTIONAL_SECTIONS
	NoClarify                 bool     // NO_CLARIFY
	// The verify gate.
	VerifyCmd         string        // VERIFY_CMD; "" = completions are not checked
	VerifyTimeout     time.Duration // VERIFY_TIMEOUT
	VerifyMaxFailures int           // VERIFY_MAX_FAILURES

	// Output
	Verbose bool // VERBOSE
	Live    bool // LIVE
	Notify  bool // NOTIFY
	Backup  bool // BACKUP

	GitHub  GitHubConfig
	Sandbox SandboxConfig

	// Secrets holds secret-looking assignments found in .ralphrc (for
	// example ANTHROPIC_API_KEY), for the agent's environment; a variable
	// already set in ralph's own environment should win over them. Secret
	// never prints its value; call Reveal to use it.
	Secrets map[string]Secret
	// Sources says where each key's value came from, by canonical key.
	Sources map[string]Source
}

// BreakerConfig holds the circuit breaker thresholds.
type BreakerConfig struct {
	NoProgressThreshold       int           // CB_NO_PROGRESS_THRESHOLD
	SameErrorThreshold        int           // CB_SAME_ERROR_THRESHOLD
	OutputDeclineThreshold    int           // CB_OUTPUT_DECLINE_THRESHOLD, percent
	PermissionDenialThreshold int           // CB_PERMISSION_DENIAL_THRESHOLD
	FailureThreshold          int           // CB_FAILURE_THRESHOLD
	Cooldown                  time.Duration // CB_COOLDOWN_MINUTES
	AutoReset                 bool          // CB_AUTO_RESET
}

// GitHubConfig is the opt-in GitHub issue lifecycle of the bash tool (its issue #73).
type GitHubConfig struct {
	Issue            string   // GITHUB_ISSUE
	CommentProgress  bool     // COMMENT_PROGRESS
	CommentInterval  int      // COMMENT_INTERVAL
	AutoClose        bool     // AUTO_CLOSE
	CloseSummary     bool     // CLOSE_SUMMARY
	CreatePR         bool     // CREATE_PR
	LinkIssue        bool     // LINK_ISSUE
	DraftPR          bool     // DRAFT_PR
	CreateFollowups  bool     // CREATE_FOLLOWUPS
	FollowupLabel    string   // FOLLOWUP_LABEL
	CompletionLabels []string // ADD_COMPLETION_LABELS
}

// SandboxConfig is the bash tool's Docker / E2B sandbox configuration.
type SandboxConfig struct {
	Provider         string        // SANDBOX_PROVIDER: "", "bwrap", "agent", "docker", "podman" or "e2b"
	Network          string        // SANDBOX_NETWORK: "on" or "none"
	DockerImage      string        // SANDBOX_DOCKER_IMAGE
	DockerMemory     string        // SANDBOX_DOCKER_MEMORY
	DockerCPUs       string        // SANDBOX_DOCKER_CPUS
	DockerNetwork    string        // SANDBOX_DOCKER_NETWORK
	E2BTemplate      string        // SANDBOX_E2B_TEMPLATE
	E2BSandboxID     string        // SANDBOX_E2B_SANDBOX_ID
	E2BTimeout       time.Duration // SANDBOX_E2B_TIMEOUT
	E2BKeepAlive     bool          // SANDBOX_E2B_KEEP_ALIVE
	E2BMaxCost       float64       // SANDBOX_E2B_MAX_COST
	E2BCostAlert     float64       // SANDBOX_E2B_COST_ALERT
	E2BCostPerHour   float64       // SANDBOX_E2B_COST_PER_HOUR
	SyncInclude      []string      // SYNC_INCLUDE
	SyncExclude      []string      // SYNC_EXCLUDE
	SyncMaxFileSize  int           // SYNC_MAX_FILE_SIZE, bytes
	SyncLargeFileAct string        // SYNC_LARGE_FILE_ACTION: "warn" or "skip"
}

// Defaults returns the built-in configuration, every source "default".
func Defaults() Config {
	c := Config{Secrets: map[string]Secret{}, Sources: map[string]Source{}}
	for i := range keyTable {
		k := &keyTable[i]
		if k.kind == kInert {
			continue
		}
		c.Sources[k.Name] = Source{Kind: SourceDefault, Name: k.Name}
		if k.Default == "" && k.kind != kList {
			continue // the zero value; "" is not a valid enum value to parse
		}
		v, problem := k.parse(k.Default)
		if problem != "" {
			// The table is fixed at compile time and a test parses every
			// default, so this is a programming error.
			panic(fmt.Sprintf("config: default of %s: %s", k.Name, problem))
		}
		k.set(&c, v)
	}
	return c
}

// clone deep-copies the slices and maps so a resolved Config never shares
// memory with the defaults it started from.
func (c Config) clone() Config {
	c.TaskSources = slices.Clone(c.TaskSources)
	c.AllowedTools = slices.Clone(c.AllowedTools)
	c.OptionalSections = slices.Clone(c.OptionalSections)
	c.GitHub.CompletionLabels = slices.Clone(c.GitHub.CompletionLabels)
	c.Sandbox.SyncInclude = slices.Clone(c.Sandbox.SyncInclude)
	c.Sandbox.SyncExclude = slices.Clone(c.Sandbox.SyncExclude)
	c.Secrets = maps.Clone(c.Secrets)
	c.Sources = maps.Clone(c.Sources)
	if c.Secrets == nil {
		c.Secrets = map[string]Secret{}
	}
	if c.Sources == nil {
		c.Sources = map[string]Source{}
	}
	return c
}

// AgentArgv splits AgentCmd into the agent's argv the way a shell would split
// words, without running a shell (see package shellwords).
func (c Config) AgentArgv() ([]string, error) {
	return shellwords.Split(c.AgentCmd)
}

// PromptPath is the prompt file to read: PromptFile, or PROMPT.md inside
// RalphDir when PromptFile is empty. A relative PromptFile is relative to the
// project directory, as in the bash tool's loop.
func (c Config) PromptPath() string {
	if c.PromptFile != "" {
		return c.PromptFile
	}
	return filepath.Join(c.RalphDir, "PROMPT.md")
}

// Setting is one key of a Redacted view.
type Setting struct {
	Key    string
	Value  string // as it would be written in .ralphrc; secrets masked
	Source Source
	Secret bool
}

// Redacted lists every key with its value and source, in template order,
// followed by the secrets (sorted, values masked). Values that merely contain
// a token-looking string (an API key inside AGENT_CMD, a password in a URL)
// are masked too. Use it for every dump: logs, status, doctor.
func (c Config) Redacted() []Setting {
	var out []Setting
	for i := range keyTable {
		k := &keyTable[i]
		if k.kind == kInert {
			continue
		}
		out = append(out, Setting{Key: k.Name, Value: scrub(k.format(&c)), Source: c.Sources[k.Name]})
	}
	for _, name := range slices.Sorted(maps.Keys(c.Secrets)) {
		out = append(out, Setting{Key: name, Value: redactedText, Source: c.Sources[name], Secret: true})
	}
	return out
}

// Value returns one key's value as .ralphrc text, redacted like Redacted.
func (c Config) Value(key string) (string, bool) {
	if s, ok := c.Secrets[key]; ok {
		return s.String(), true
	}
	k := findKey(key)
	if k == nil || k.kind == kInert {
		return "", false
	}
	return scrub(k.format(&c)), true
}

// String renders the redacted configuration, one KEY=value per line with its
// source, so printing a Config can never leak a secret.
func (c Config) String() string {
	var b strings.Builder
	for _, s := range c.Redacted() {
		fmt.Fprintf(&b, "%s=%s  # %s\n", s.Key, QuoteValue(s.Value), s.Source)
	}
	return b.String()
}

// format writes a field back as .ralphrc text, in the key's own unit.
func (k *keyInfo) format(c *Config) string {
	switch p := k.field(c).(type) {
	case *string:
		return *p
	case *bool:
		return strconv.FormatBool(*p)
	case *int:
		return strconv.Itoa(*p)
	case *float64:
		return strconv.FormatFloat(*p, 'f', -1, 64)
	case *[]string:
		return strings.Join(*p, ",")
	case *time.Duration:
		// A whole number in the key's unit reads as the bash tool wrote
		// it; anything finer (--timeout 90s) keeps its unit, or 90s would
		// show as 1.
		unit := map[kind]time.Duration{kMinutes: time.Minute, kHours: time.Hour, kSeconds: time.Second}[k.kind]
		if unit != 0 && *p%unit == 0 {
			return strconv.FormatInt(int64(*p/unit), 10)
		}
		return fmtDuration(*p)
	}
	return ""
}

// set stores a parsed value (from parse) in the key's field.
func (k *keyInfo) set(c *Config, v any) {
	switch p := k.field(c).(type) {
	case *string:
		*p = v.(string)
	case *bool:
		*p = v.(bool)
	case *int:
		*p = int(v.(int64))
	case *float64:
		*p = v.(float64)
	case *[]string:
		*p = v.([]string)
	case *time.Duration:
		*p = v.(time.Duration)
	}
}
