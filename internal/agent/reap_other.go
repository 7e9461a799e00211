//go:build !linux

package agent

import "syscall"

func askPidfd(*syscall.SysProcAttr) *int { fd := -1; return &fd }

func awaitExit(int) {}
