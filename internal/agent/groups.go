package agent

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"syscall"
	"time"
)

// The process groups of the agents running now, process-wide, for the two
// moments when the normal stop path is not enough: a second interrupt
// (KillGroups ends them at once, without the grace period) and ralph dying
// by kill -9 (OnGroupsChange lets the caller record them, so the next run
// can find what the dead one left: see LeftoverGroups).

// GroupEnv is set in every agent's environment to a token of this ralph
// process, so that a later ralph can tell a leftover group of ours from an
// unrelated one that happens to reuse its number.
const GroupEnv = "RALPH_AGENT_GROUP"

var groups struct {
	sync.Mutex
	live     []int
	onChange func(live []int, token string)
	token    string
}

// GroupToken is the value of GroupEnv in this process's agents.
func GroupToken() string {
	groups.Lock()
	defer groups.Unlock()
	return tokenLocked()
}

func tokenLocked() string {
	if groups.token == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		groups.token = hex.EncodeToString(b[:])
	}
	return groups.token
}

// OnGroupsChange calls fn (nil: no one) with the live groups whenever an
// agent starts or its group is gone. It is called with the registry locked,
// so the record is never older than the groups; fn must not start agents.
func OnGroupsChange(fn func(live []int, token string)) {
	groups.Lock()
	defer groups.Unlock()
	groups.onChange = fn
}

func trackGroup(pgid int) {
	groups.Lock()
	defer groups.Unlock()
	groups.live = append(groups.live, pgid)
	notifyLocked()
}

func untrackGroup(pgid int) {
	groups.Lock()
	defer groups.Unlock()
	groups.live = slices.DeleteFunc(groups.live, func(g int) bool { return g == pgid })
	notifyLocked()
}

func notifyLocked() {
	if groups.onChange != nil {
		groups.onChange(slices.Clone(groups.live), tokenLocked())
	}
}

// KillGroups sends SIGKILL to every running agent's whole process group:
// the answer to a second interrupt, when the user will not wait out the
// grace period. The runners still reap and report as usual.
func KillGroups() {
	groups.Lock()
	defer groups.Unlock()
	for _, g := range groups.live {
		signalGroup(g, syscall.SIGKILL)
	}
}

// EndGroups stops leftover groups the way a timeout does: SIGTERM, SIGKILL
// after the grace period, and waits for them to be gone. It returns the
// groups that still had live processes afterwards.
func EndGroups(pgids []int, r *Runner) []int {
	for _, g := range pgids {
		signalGroup(g, syscall.SIGTERM)
	}
	var left []int
	for _, g := range pgids {
		if waitGroupGone(g, time.Now().Add(r.grace())) {
			continue
		}
		signalGroup(g, syscall.SIGKILL)
		if !waitGroupGone(g, time.Now().Add(r.reapTimeout())) {
			left = append(left, g)
		}
	}
	return left
}
