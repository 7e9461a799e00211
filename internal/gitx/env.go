package gitx

import (
	"os"
	"strings"
)

// keptEnv are the only variables of ralph's environment that host git
// sees. It is an allow-list because a daemon's environment holds its
// secrets (chat and GitHub tokens, the API token, webhook secrets): a
// program a repository managed to make git run must find none of them, and
// the user's GIT_* variables (GIT_DIR, GIT_CONFIG_*, GIT_SSH_COMMAND…) must
// not move or reconfigure the repository ralph reads.
var keptEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	// Fetch and push over HTTPS behind a proxy or a private CA.
	"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
	"NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy",
	// Pushing over SSH with the user's agent.
	"SSH_AUTH_SOCK",
}

// identityEnv are what git reads for who commits; only Identity keeps them.
var identityEnv = []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"}

// fixedEnv come after what is kept, so they win. No system or global
// configuration (Identity excepted): those files are not ralph's to trust
// for what to run, and the repository's own is pinned and watched (guard.go).
var fixedEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true",
	"GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true",
	"GIT_SSH_COMMAND=ssh", "GIT_ATTR_NOSYSTEM=1",
	"GIT_NO_REPLACE_OBJECTS=1",
	// Messages are parsed.
	"LC_ALL=C",
}

// hardening are -c settings before every subcommand that switch off the
// programs a repository's configuration can name on the paths ralph's
// commands take. They are defence in depth: the configuration itself is
// pinned and checked (guard.go), since no list of options can be complete.
var hardening = []string{
	"core.fsmonitor=false", "core.hooksPath=/dev/null", "core.sshCommand=ssh",
	"core.pager=cat", "core.editor=true", "core.askPass=true",
	// An empty value empties the list of helpers.
	"credential.helper=", "commit.gpgSign=false", "tag.gpgSign=false",
	"protocol.ext.allow=never",
	// Submodules run git with their own configuration, which lives where
	// the agent could write.
	"diff.ignoreSubmodules=all", "submodule.recurse=false", "status.submoduleSummary=false",
	"fetch.recurseSubmodules=false",
	// No background maintenance ralph did not ask for.
	"gc.auto=0", "maintenance.auto=false",
}

// environ is host git's environment: the kept part of ralph's, then the
// fixed settings, then extra (the command's own: a pin, an index, an
// identity, a credential header).
func environ(extra []string, identity bool) []string {
	keep := keptEnv
	if identity {
		keep = append(append([]string(nil), keptEnv...), identityEnv...)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if kept(name, keep) {
			env = append(env, kv)
		}
	}
	for _, kv := range fixedEnv {
		if identity && kv == "GIT_CONFIG_GLOBAL=/dev/null" {
			continue // who the user commits as is in their global configuration
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

func kept(name string, keep []string) bool {
	if strings.HasPrefix(name, "LC_") {
		return true
	}
	for _, k := range keep {
		if name == k {
			return true
		}
	}
	return false
}
