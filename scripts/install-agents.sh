#!/usr/bin/env bash
# Installs the pinned agent CLIs that the end-to-end tests run for real into
# the repository's .cache/agents (never globally). Safe to run again: a CLI
# that already reports the pinned version is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned because an unpinned install has resolved to an older release whose
# output differs from the fixtures the tests were written against.
CLAUDE_VERSION=2.1.329
prefix=.cache/agents
claude="$prefix/node_modules/.bin/claude"

have=""
if [ -x "$claude" ]; then
	# --version prints e.g. "2.1.329 (Claude Code)"; keep only the number.
	have="$("$claude" --version 2>/dev/null </dev/null | awk '{print $1}' || true)"
fi

if [ "$have" = "$CLAUDE_VERSION" ]; then
	echo "install-agents: claude $CLAUDE_VERSION already installed in $prefix"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-agents: npm is required to install @anthropic-ai/claude-code" >&2
	exit 1
fi

echo "install-agents: installing @anthropic-ai/claude-code@$CLAUDE_VERSION into $prefix (found: ${have:-none})"
mkdir -p "$prefix"
# --include=optional because the native binary ships as an optional
# platform package; without it the CLI has nothing to run.
npm install --prefix "$prefix" --no-audit --no-fund --no-save --include=optional \
	"@anthropic-ai/claude-code@$CLAUDE_VERSION"

got="$("$claude" --version </dev/null | awk '{print $1}')"
if [ "$got" != "$CLAUDE_VERSION" ]; then
	echo "install-agents: expected claude $CLAUDE_VERSION, got '$got'" >&2
	exit 1
fi
echo "install-agents: installed claude $got at $claude"
