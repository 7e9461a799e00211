//go:build !linux

package reap

import "syscall"

func AskPidfd(*syscall.SysProcAttr) *int { fd := -1; return &fd }

func AwaitExit(int) {}
