#!/usr/bin/env bash
# Installs what the end-to-end tests need into project-local directories
# (nothing global but Debian packages). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

go mod download
bash scripts/install-agents.sh
