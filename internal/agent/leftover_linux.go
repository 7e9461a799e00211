package agent

import (
	"bytes"
	"os"
	"slices"
)

// LeftoverGroups returns those of pgids that still have a live process
// carrying GroupEnv=token in its environment: agents' processes of a ralph
// that died without stopping them. A group whose number was reused by an
// unrelated program does not carry the token and is left alone.
func LeftoverGroups(pgids []int, token string) []int {
	if token == "" || len(pgids) == 0 {
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
		if !ok || state == 'Z' || state == 'X' || !slices.Contains(pgids, pg) || slices.Contains(found, pg) {
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
