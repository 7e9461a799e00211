#!/usr/bin/env bash
# Builds Jaeger's all-in-one (v2, cmd/jaeger), the trace backend the
# traces' end-to-end tests export to, at a pinned version from the Go
# module proxy, into a cache outside the clone (the build takes minutes;
# later runs find it). Jaeger's go.mod carries a replace directive that
# `go install` refuses, so it is built as a tool of a small module of its
# own holding the same directive; it stays out of ralph's own go.mod.
# Prints the binary's path.
set -euo pipefail

version=v1.76.0
dir="${XDG_CACHE_HOME:-$HOME/.cache}/ralph-test/jaeger-$version"
bin="$dir/jaeger"
if [ ! -x "$bin" ]; then
	echo "install-jaeger: building Jaeger $version into $dir" >&2
	mkdir -p "$dir/tool"
	cat >"$dir/tool/go.mod" <<MOD
module ralph-test/jaeger

go 1.25

replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0
MOD
	# Outside ralph's module, so its go.mod (and a GOFLAGS such as
	# -mod=vendor) has no say in the tool's build.
	(cd "$dir/tool" &&
		GOFLAGS= go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$version" &&
		GOFLAGS= go build -o "$bin.part" github.com/jaegertracing/jaeger/cmd/jaeger &&
		mv "$bin.part" "$bin")
fi
echo "$bin"
