// Package bintest finds the programs the tests run beside ralph — the
// Temporal CLI, Jaeger, built by the scripts into a cache kept by version
// outside the clone — and gives them free ports.
package bintest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// Cached is the program name built by script into the cache directory
// dir (ralph-test/DIR under the user's cache), or the path in the
// variable env when it is set.
func Cached(env, dir, name, script string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "ralph-test", dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not built (bash %s): %w", name, script, err)
	}
	return p, nil
}

// Need skips the test when err says a program is missing, except on CI
// (CI=true), where no test may skip: it fails.
func Need(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(err)
	}
	t.Skip(err)
}

// FreePort is a loopback TCP port nobody listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
