#!/usr/bin/env bash
# Builds the Temporal CLI, whose `server start-dev` the Temporal backend's
# integration tests run, at a pinned version from the Go module proxy, into
# a cache outside the clone (the build takes minutes; later runs find it).
# Later CLI releases carry a replace directive that `go install` refuses;
# the server stays out of ralph's own go.mod. Prints the binary's path.
#
# It is built with modernc.org/sqlite at a pinned later version than the
# one the CLI names (v1.34.1): with that one, a request cancelled while its
# query ran left the dev server's one SQLite connection interrupted, and
# the server failed its reads ("interrupted (9)") from then on.
set -euo pipefail

version=v1.5.1
sqlite=v1.44.3
dir="${XDG_CACHE_HOME:-$HOME/.cache}/ralph-test/temporal-$version-sqlite-$sqlite"
bin="$dir/temporal"
if [ ! -x "$bin" ]; then
	echo "install-temporal-cli: building the Temporal CLI $version with modernc.org/sqlite $sqlite into $dir" >&2
	mkdir -p "$dir/build"
	# A module of its own, outside any other, so ralph's go.mod (and a
	# GOFLAGS such as -mod=vendor) has no say in the tool's build; the
	# go command fills in the rest of its requirements from the CLI's.
	cat > "$dir/build/go.mod" <<MOD
module ralph.test/temporal-cli

go 1.25.0

require (
	github.com/temporalio/cli $version
	modernc.org/sqlite $sqlite
)
MOD
	(cd "$dir/build" && GOFLAGS=-mod=mod go build -o "$bin.tmp" github.com/temporalio/cli/cmd/temporal)
	mv "$bin.tmp" "$bin"
fi
echo "$bin"
