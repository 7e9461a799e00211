#!/usr/bin/env bash
# Builds the Temporal CLI, whose `server start-dev` the Temporal backend's
# integration tests run, at a pinned version from the Go module proxy, into
# a cache outside the clone (the build takes minutes; later runs find it).
# Later CLI releases carry a replace directive that `go install` refuses;
# the server stays out of ralph's own go.mod. Prints the binary's path.
set -euo pipefail

version=v1.5.1
dir="${XDG_CACHE_HOME:-$HOME/.cache}/ralph-test/temporal-$version"
bin="$dir/temporal"
if [ ! -x "$bin" ]; then
	echo "install-temporal-cli: building the Temporal CLI $version into $dir" >&2
	mkdir -p "$dir"
	# Outside any module, so ralph's go.mod (and a GOFLAGS such as
	# -mod=vendor) has no say in the tool's build.
	(cd "$dir" && GOFLAGS= GOBIN="$dir" go install "github.com/temporalio/cli/cmd/temporal@$version")
fi
echo "$bin"
