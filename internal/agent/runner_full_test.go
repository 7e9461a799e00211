//go:build linux

package agent

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

// A live tee that cannot write the output log (/dev/full answers every
// write with ENOSPC) says so in OutputErr, so the loop does not read a
// log that lacks what the agent said; the agent itself is not held up.
func TestRunReportsAnOutputLogItCouldNotWrite(t *testing.T) {
	p := proc(t, "/bin/sh", "-c", "echo one; echo two")
	p.StdoutPath = "/dev/full"
	var lines int
	p.OnLine = func([]byte) { lines++ }
	res, err := (&Runner{}).Run(context.Background(), p)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if !errors.Is(res.OutputErr, syscall.ENOSPC) || lines != 2 {
		t.Errorf("OutputErr %v after %d lines; want ENOSPC after both lines", res.OutputErr, lines)
	}
	// Written straight to a log that works, there is nothing to report.
	ok, err := (&Runner{}).Run(context.Background(), proc(t, "/bin/sh", "-c", "echo one"))
	if err != nil || ok.OutputErr != nil {
		t.Errorf("a good log: %+v, %v", ok, err)
	}
}
