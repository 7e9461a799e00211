package agent

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

// MarkedGroups finds the group of a process carrying the token, whatever
// its number, and nothing for another token; LeftoverGroups only among the
// groups it is given.
func TestMarkedGroups(t *testing.T) {
	const token = "marked-groups-test-token"
	cmd := exec.Command("sleep", "60")
	cmd.Env = []string{GroupEnv + "=" + token}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pg := cmd.Process.Pid
	if got := MarkedGroups(token); !slices.Equal(got, []int{pg}) {
		t.Errorf("MarkedGroups = %v, want [%d]", got, pg)
	}
	if got := MarkedGroups("another-token"); len(got) > 0 {
		t.Errorf("MarkedGroups of another token = %v", got)
	}
	if got := LeftoverGroups([]int{pg + 100000}, token); len(got) > 0 {
		t.Errorf("LeftoverGroups outside the given groups = %v", got)
	}
	if got := LeftoverGroups([]int{pg}, token); !slices.Equal(got, []int{pg}) {
		t.Errorf("LeftoverGroups = %v, want [%d]", got, pg)
	}
}
