package reap

import (
	"bytes"
	"errors"
	"os/exec"
	"testing"
)

// Run ends like cmd.Run: the output read to its end, the exit status, and a
// start failure as an error.
func TestRunIsCmdRun(t *testing.T) {
	var out bytes.Buffer
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.1; echo hi; exit 3")
	cmd.Stdout = &out
	err := Run(cmd)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || out.String() != "hi\n" {
		t.Errorf("err %v, output %q", err, out.String())
	}
	if err := Run(exec.Command("/nonexistent/tool")); err == nil {
		t.Error("a missing executable ran")
	}
}
