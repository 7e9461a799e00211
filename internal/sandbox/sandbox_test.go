package sandbox

import (
	"context"
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
		{Spec{Provider: "chroot"}, `want bwrap, docker or podman`},
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
