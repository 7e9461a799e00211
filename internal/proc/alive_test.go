package proc

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	if Alive(0) || Alive(-1) {
		t.Error("pid 0 or -1 alive")
	}
	if runtime.GOOS == "windows" {
		return
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true")
	}
	if Alive(cmd.Process.Pid) {
		t.Errorf("a reaped child (%d) is alive", cmd.Process.Pid)
	}
}
