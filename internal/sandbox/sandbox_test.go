package sandbox

import (
	"context"
	"path/filepath"
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
