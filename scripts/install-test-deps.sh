#!/usr/bin/env bash
# Installs what the end-to-end tests need into project-local directories
# (nothing global but Debian packages). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, as command:package: tmux drives the dashboard test in a
# real terminal, git is what the loop measures progress with, bubblewrap is
# the sandbox of SANDBOX_PROVIDER=bwrap, chromium is the headless browser of
# the web dashboard's test (internal/dashboard; never a browser download),
# socat is what Claude Code's own sandbox needs beside bubblewrap on Linux
# (SANDBOX_PROVIDER=agent), prometheus is the real server that scrapes the
# daemon's /metrics in the metrics test.
missing=()
for want in tmux:tmux git:git bwrap:bubblewrap chromium:chromium socat:socat prometheus:prometheus; do
	command -v "${want%%:*}" >/dev/null 2>&1 || missing+=("${want#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-test-deps: installing ${missing[*]}"
	sudo_cmd=()
	if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
		sudo_cmd=(sudo)
	fi
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

go mod download
# The Temporal dev server of the Temporal backend's integration tests.
bash scripts/install-temporal-cli.sh >/dev/null
# The trace backend of the traces' end-to-end tests.
bash scripts/install-jaeger.sh >/dev/null
bash scripts/install-agents.sh
