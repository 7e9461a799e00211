#!/usr/bin/env bash
# Installs the pinned agent CLIs that the end-to-end tests run for real into
# the repository's .cache/agents (never globally). Safe to run again: when
# every CLI already reports its pinned version nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned because an unpinned install has resolved to an older release whose
# output differs from the fixtures the tests were written against.
CLAUDE_VERSION=2.1.329
CODEX_VERSION=0.169.0
GEMINI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33
prefix=.cache/agents
bin="$prefix/node_modules/.bin"

# name|package|version, one per CLI; the name is the command under $bin.
agents=(
	"claude|@anthropic-ai/claude-code|$CLAUDE_VERSION"
	"codex|@openai/codex|$CODEX_VERSION"
	"gemini|@google/gemini-cli|$GEMINI_VERSION"
	"opencode|opencode-ai|$OPENCODE_VERSION"
)

# installed_version prints the version a CLI reports, or nothing. The
# formats differ ("2.1.329 (Claude Code)", "codex-cli 0.169.0", "0.61.0"),
# so keep the first word that looks like a version.
installed_version() {
	local exe="$bin/$1"
	[ -x "$exe" ] || return 0
	"$exe" --version 2>/dev/null </dev/null |
		grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n1 || true
}

wanted=()
for a in "${agents[@]}"; do
	IFS='|' read -r name pkg version <<<"$a"
	have="$(installed_version "$name")"
	if [ "$have" = "$version" ]; then
		echo "install-agents: $name $version already installed in $prefix"
	else
		echo "install-agents: $name needs $pkg@$version (found: ${have:-none})"
	fi
	# Every package goes into the one npm call below, even those already
	# there: npm removes packages a call does not name, as extraneous.
	wanted+=("$pkg@$version")
	[ "$have" = "$version" ] || missing=1
done

if [ -z "${missing:-}" ]; then
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-agents: npm is required to install ${wanted[*]}" >&2
	exit 1
fi

echo "install-agents: installing ${wanted[*]} into $prefix"
mkdir -p "$prefix"
# --include=optional because Claude Code, Codex and OpenCode ship their
# native binaries as optional platform packages; without them there is
# nothing to run.
npm install --prefix "$prefix" --no-audit --no-fund --no-save --include=optional "${wanted[@]}"

status=0
for a in "${agents[@]}"; do
	IFS='|' read -r name pkg version <<<"$a"
	got="$(installed_version "$name")"
	if [ "$got" != "$version" ]; then
		echo "install-agents: expected $name $version, got '${got:-nothing}'" >&2
		status=1
		continue
	fi
	echo "install-agents: installed $name $got at $bin/$name"
done
exit "$status"
