package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"ralph/internal/config"
	"ralph/internal/store"
)

// VersionTimeout bounds `<agent> --version`: an agent run through npx may
// download itself first, but doctor must not hang on it.
const VersionTimeout = 10 * time.Second

// Disk space thresholds: below BlockBytes a run is likely to die writing its
// logs and state; below WarnBytes a few long transcripts can fill it.
const (
	BlockBytes = 100 << 20
	WarnBytes  = 1 << 30
)

// credentialVars are the environment variables Claude Code authenticates
// with, in the order it prefers them.
var credentialVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}

// cloudVars switch Claude Code to a cloud provider's own credentials, which
// doctor cannot see; their presence is enough.
var cloudVars = []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"}

// checkAgentVersion runs `<agent> --version` and compares it with
// CLAUDE_MIN_VERSION. Not being able to read a version is a warning (a
// wrapper script may not pass --version on); a version below the minimum
// blocks, since the configuration says ralph does not accept it.
func checkAgentVersion(ctx context.Context, cfg config.Config, env Env, argv []string) Check {
	c := Check{Name: NameAgentVersion, Status: Warn}
	ctx, cancel := context.WithTimeout(ctx, VersionTimeout)
	defer cancel()
	cmd := append(append([]string(nil), argv...), "--version")
	out, err := env.Run(ctx, cmd)
	if ctx.Err() == context.DeadlineExceeded {
		c.Detail = fmt.Sprintf("`%s --version` did not answer within %s", argv[0], VersionTimeout)
		return c
	}
	if err != nil {
		c.Detail = fmt.Sprintf("`%s --version` failed: %v", argv[0], err)
		if line := firstLine(out); line != "" {
			c.Detail += ": " + line
		}
		return c
	}
	v := ParseVersion(out)
	if v == "" {
		c.Detail = fmt.Sprintf("no version in the output of `%s --version`: %q", argv[0], firstLine(out))
		return c
	}
	min := cfg.MinAgentVersion
	if cfg.AgentProvider != "claude" {
		min = "" // CLAUDE_MIN_VERSION is about Claude Code
	}
	switch {
	case min == "":
		c.Status, c.Detail = OK, v
	case CompareVersions(v, min) < 0:
		c.Status = Fail
		c.Detail = fmt.Sprintf("%s is older than CLAUDE_MIN_VERSION %s: update it (npm install -g @anthropic-ai/claude-code@latest)", v, min)
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("%s (CLAUDE_MIN_VERSION %s)", v, min)
	}
	return c
}

// firstLine is the first non-blank line of a command's output, bounded and
// redacted: it goes into a report that may be pasted into an issue.
func firstLine(out string) string {
	for l := range strings.SplitSeq(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 160 {
				l = l[:160] + "…"
			}
			return store.Redact(l)
		}
	}
	return ""
}

var versionPat = regexp.MustCompile(`\d+(?:\.\d+)+`)

// ParseVersion picks the first dotted number out of a --version output such
// as "2.0.76 (Claude Code)" or "claude 2.1.0-beta.1"; "" when there is none.
// A pre-release or build suffix is dropped: comparing with a minimum only
// needs the numbers.
func ParseVersion(out string) string {
	return versionPat.FindString(out)
}

// CompareVersions compares dotted numeric versions component by component,
// a missing component counting as 0 (so 2.1 == 2.1.0); it returns -1, 0 or
// +1. Anything after the leading dotted number is ignored.
func CompareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) []int {
	var out []int
	for f := range strings.SplitSeq(ParseVersion(v), ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			break // only on overflow: the pattern matched digits
		}
		out = append(out, n)
	}
	return out
}

// checkCredentials names the credentials the agent will find, never their
// values. Finding none is a warning, not a failure: Claude Code also
// authenticates through the macOS Keychain, an apiKeyHelper or a cloud
// provider's own login, none of which doctor can see.
func checkCredentials(cfg config.Config, env Env) Check {
	if cfg.AgentProvider != "claude" {
		return otherCredentials(cfg, env)
	}
	var found []string
	for _, k := range credentialVars {
		if v, ok := env.LookupEnv(k); ok && v != "" {
			found = append(found, k+" (environment)")
		} else if s, ok := cfg.Secrets[k]; ok && s.Reveal() != "" {
			found = append(found, k+" (.ralphrc)")
		}
	}
	for _, k := range cloudVars {
		if v, ok := env.LookupEnv(k); ok && v != "" && v != "0" && v != "false" {
			found = append(found, k+" (environment)")
		}
	}
	if login := loginFile(env); login != "" {
		found = append(found, "login "+login)
	}
	if len(found) > 0 {
		return Check{Name: NameCredentials, Status: OK, Detail: strings.Join(found, "; ")}
	}
	detail := "none found: log in with `claude` (then /login), or set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN (`claude setup-token`)"
	if env.OS == "darwin" {
		detail += "; a login kept in the macOS Keychain is not visible to doctor"
	}
	return Check{Name: NameCredentials, Status: Warn, Detail: detail}
}

// claudeLogin asks `claude auth status` whether Claude Code is logged in.
// Not logged in blocks: every call would fail with "Not logged in". An
// answer doctor cannot read leaves the check as it was.
func claudeLogin(ctx context.Context, env Env, argv []string, c Check) Check {
	ctx, cancel := context.WithTimeout(ctx, VersionTimeout)
	defer cancel()
	out, err := env.Run(ctx, append(append([]string(nil), argv...), "auth", "status"))
	var st struct {
		LoggedIn   *bool  `json:"loggedIn"`
		AuthMethod string `json:"authMethod"`
	}
	if err != nil || json.Unmarshal([]byte(strings.TrimSpace(out)), &st) != nil || st.LoggedIn == nil {
		return c
	}
	if !*st.LoggedIn {
		return Check{Name: NameCredentials, Status: Fail, Detail: "claude is not logged in (`claude auth status`): log in with `claude` (then /login), or set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN"}
	}
	return Check{Name: NameCredentials, Status: OK, Detail: "logged in (`claude auth status`: " + st.AuthMethod + ")"}
}

// loginFile returns how to name Claude Code's stored login when it exists:
// .credentials.json in $CLAUDE_CONFIG_DIR, else in ~/.claude. The name is
// given as the user would write it, not as this machine's path.
func loginFile(env Env) string {
	const name = ".credentials.json"
	var path, shown string
	if dir, ok := env.LookupEnv("CLAUDE_CONFIG_DIR"); ok && dir != "" {
		path, shown = filepath.Join(dir, name), "$CLAUDE_CONFIG_DIR/"+name
	} else if home, err := env.HomeDir(); err == nil && home != "" {
		path, shown = filepath.Join(home, ".claude", name), "~/.claude/"+name
	} else {
		return ""
	}
	fi, err := env.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return ""
	}
	return shown
}

// checkGit reports the repository and whether it is clean. Neither a
// missing repository nor a dirty tree blocks: ralph runs on plain
// directories (progress then comes from the agent's own report), and
// progress is measured from the state before each call, so changes already
// there do not count. But both deserve a look before leaving an agent alone
// with the project.
func checkGit(ctx context.Context, dir string, env Env) Check {
	c := Check{Name: NameGit, Status: Warn}
	in, err := env.Git.IsRepo(ctx, dir)
	if err != nil {
		c.Detail = fmt.Sprintf("git is not usable: %v; progress is then judged from the agent's own report", err)
		return c
	}
	if !in {
		c.Detail = "not a git repository: progress is judged from the agent's own report, and --backup is unavailable (`git init` fixes both)"
		return c
	}
	where := "git repository"
	if root, err := env.Git.Root(ctx, dir); err == nil && filepath.Clean(root) != filepath.Clean(dir) {
		where = "inside the git repository at " + root
	}
	branch, err := env.Git.CurrentBranch(ctx, dir)
	switch {
	case err != nil:
		where += fmt.Sprintf(", branch unknown (%v)", err)
	case branch == "":
		where += ", detached HEAD"
	default:
		where += ", branch " + branch
	}
	clean, err := env.Git.IsClean(ctx, dir)
	if err != nil {
		c.Detail = fmt.Sprintf("%s; status unknown: %v", where, err)
		return c
	}
	if clean {
		c.Status, c.Detail = OK, where+", clean"
		return c
	}
	c.Detail = where + ", uncommitted changes"
	if paths, err := env.Git.DirtyPaths(ctx, dir); err == nil && len(paths) > 0 {
		c.Detail += ": " + listOf(paths, 5)
	}
	c.Detail += " (commit or stash them so the agent's work stays separate)"
	return c
}

// checkGitIdentity reports who the agent's commits would be signed by. The
// prompt asks the agent to commit each task; without an identity every one
// of those commits fails, which the agent then works around or gives up on.
func checkGitIdentity(ctx context.Context, dir string, env Env) Check {
	c := Check{Name: NameGitIdentity, Status: Warn}
	id, err := env.Git.Identity(ctx, dir)
	if err != nil {
		c.Detail = "commits will fail: " + err.Error()
		return c
	}
	c.Status, c.Detail = OK, "commits by "+id
	return c
}

// checkDisk measures the space left on the project's file system, where
// logs, transcripts and state files go.
func checkDisk(dir string, env Env) Check {
	c := Check{Name: NameDisk}
	free, err := env.FreeBytes(dir)
	if err != nil {
		c.Status, c.Detail = Warn, fmt.Sprintf("free space unknown: %v", err)
		return c
	}
	c.Detail = humanBytes(free) + " free"
	switch {
	case free < BlockBytes:
		c.Status = Fail
		c.Detail += fmt.Sprintf(" (below %s: logs and state files would not fit)", humanBytes(BlockBytes))
	case free < WarnBytes:
		c.Status = Warn
		c.Detail += fmt.Sprintf(" (below %s: long transcripts may fill it)", humanBytes(WarnBytes))
	default:
		c.Status = OK
	}
	return c
}

// humanBytes renders a size in binary units, to one decimal.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTPE"[exp])
}
