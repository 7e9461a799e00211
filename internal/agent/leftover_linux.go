package agent

import (
	"bytes"
	"os"
	"slices"
	"syscall"
)

// LeftoverGroups returns those of pgids that still have a live process
// carrying GroupEnv=token in its environment: agents' processes of a ralph
// that died without stopping them. A group whose number was reused by an
// unrelated program does not carry the token and is left alone.
func LeftoverGroups(pgids []int, token string) []int {
	if len(pgids) == 0 {
		return nil
	}
	return markedGroups(token, func(pg int) bool { return slices.Contains(pgids, pg) })
}

// MarkedGroups returns the process groups of every live process carrying
// GroupEnv=token: what the agents of a ralph that died left running, found
// without a record of their groups (which would have to be rewritten at
// every call), and also a grandchild that moved itself to a group of its
// own. The caller's own group is never among them.
func MarkedGroups(token string) []int {
	own := syscall.Getpgrp()
	return markedGroups(token, func(pg int) bool { return pg > 1 && pg != own })
}

func markedGroups(token string, consider func(pg int) bool) []int {
	if token == "" {
		return nil
	}
	names, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(GroupEnv + "=" + token)
	var found []int
	for _, e := range names {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		state, pg, ok := parseStat(stat)
		if !ok || state == 'Z' || state == 'X' || !consider(pg) || slices.Contains(found, pg) {
			continue
		}
		env, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil {
			continue
		}
		for v := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(v, want) {
				found = append(found, pg)
				break
			}
		}
	}
	return found
}
