package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A sandbox that cannot run is a refusal naming what to do, never a silent
// run on the host.
func TestOpenRefusals(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no docker, podman or bwrap
	for _, tt := range []struct {
		spec Spec
		want string
	}{
		{Spec{Provider: Docker}, "docker is not installed; ralph will not run the agent unsandboxed"},
		{Spec{Provider: Podman}, "podman is not installed"},
		{Spec{Provider: E2B}, "e2b is not supported"},
		{Spec{Provider: Bwrap}, "bwrap"}, // not found here, or not Linux
		{Spec{Provider: "chroot"}, `want bwrap, agent, docker or podman`},
		{Spec{Provider: Bwrap, Network: "some"}, `SANDBOX_NETWORK="some"`},
	} {
		sb, err := Open(context.Background(), tt.spec)
		if sb != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%+v) = %v, %v; want an error with %q", tt.spec, sb, err, tt.want)
		}
	}
	if sb, err := Open(context.Background(), Spec{}); sb != nil || err != nil {
		t.Errorf("no provider: %v, %v", sb, err)
	}
}

// A project that contains the home directory would expose what the
// sandbox hides: refused.
func TestWrapRefusesHomeInProject(t *testing.T) {
	sb := &Sandbox{Spec: Spec{Provider: Bwrap}, Bwrap: "/usr/bin/bwrap"}
	for _, dir := range []string{"/home/u", "/home", "/"} {
		if _, err := sb.Wrap([]string{"agent"}, dir, []string{"HOME=/home/u"}); err == nil {
			t.Errorf("project %s: no error", dir)
		}
	}
	argv, err := sb.Wrap([]string{"agent", "-p"}, "/home/u/src/app", []string{"HOME=/home/u", "PATH=/usr/bin"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(argv, " ")
	for _, want := range []string{"--ro-bind / /", "--tmpfs /tmp", "--tmpfs /home/u", "--unshare-pid", "--die-with-parent",
		"--bind /home/u/src/app /home/u/src/app --chdir /home/u/src/app -- agent -p"} {
		if !strings.Contains(got, want) {
			t.Errorf("argv lacks %q:\n%s", want, got)
		}
	}
	for _, never := range []string{"--new-session", "--unshare-net"} {
		if strings.Contains(got, never) {
			t.Errorf("argv has %s (it would take the agent out of ralph's process group, or its network):\n%s", never, got)
		}
	}
}

// Inside node_modules the whole outermost node_modules stays visible: a
// CLI's launcher may run a sibling package's binary (Claude Code does, from
// its platform package); a checkout under /tmp, hidden in the sandbox,
// must still be able to run it.
func TestPackageRootTakesTheWholeNodeModules(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "ci", ".cache", "agents", "node_modules", "@anthropic-ai", "claude-code", "bin")
	if got, want := packageRoot(dir, top), filepath.Join(top, "ci", ".cache", "agents", "node_modules"); got != want {
		t.Errorf("packageRoot = %s, want %s", got, want)
	}
	plain := filepath.Join(top, "tool", "bin")
	if got := packageRoot(plain, top); got != plain {
		t.Errorf("outside node_modules: %s, want the directory itself", got)
	}
}

// What is hidden goes before the project's bind when it holds the
// project (so the project comes back on top), after it otherwise (so a
// home kept inside the project stays hidden); the root, the project itself
// and what does not exist are left alone.
func TestHideArgsOrder(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "ralph-home")
	project := filepath.Join(home, "requests", "work", "r1")
	inside := filepath.Join(base, "proj", ".ralph-home")
	key := filepath.Join(base, "client.key")
	for _, d := range []string{project, inside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(key, []byte("k"), 0o600)
	sb := &Sandbox{Spec: Spec{Hide: []string{home, inside, key, "/", "relative", filepath.Join(base, "missing")}}}
	before, after := sb.hideArgs(project)
	if want := []string{"--tmpfs", home}; !slices.Equal(before, want) {
		t.Errorf("before the project: %q, want %q", before, want)
	}
	if want := []string{"--tmpfs", inside, "--ro-bind", "/dev/null", key}; !slices.Equal(after, want) {
		t.Errorf("after the project: %q, want %q", after, want)
	}
	if b, a := (&Sandbox{Spec: Spec{Hide: []string{project}}}).hideArgs(project); b != nil || a != nil {
		t.Errorf("the project itself hidden: %q %q", b, a)
	}
}

// The call's directories are bound alone: a parent that is not hidden
// already is hidden first, and never the root or a top-level directory.
func TestCallDirArgs(t *testing.T) {
	base := t.TempDir()
	calls := filepath.Join(base, "calls")
	tmp, call := filepath.Join(calls, "t"), filepath.Join(calls, "c")
	for _, d := range []string{tmp, call} {
		os.MkdirAll(d, 0o700)
	}
	got := callDirArgs("/work/p", tmp, call)
	want := []string{"--tmpfs", calls, "--bind", tmp, tmp, "--bind", call, call}
	if !slices.Equal(got, want) {
		t.Errorf("callDirArgs = %q, want %q", got, want)
	}
	if got := callDirArgs("/work/p", "", filepath.Join(base, "gone")); got != nil {
		t.Errorf("nothing to bind: %q", got)
	}
}
