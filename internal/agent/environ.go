package agent

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// What an agent's environment holds: ralph's own, less what is withheld,
// the run's marker and a temp directory of the call's own.

// withheld names the variables of ralph's own environment that no agent
// gets: the daemon's credentials (bot tokens, webhook secrets, its API
// token). An agent reads untrusted text; what it never sees it cannot leak.
var withheld sync.Map // name → struct{}

// Withhold keeps the named variables out of every agent's environment from
// now on (the extra entries of an Invocation may still set them).
func Withhold(names ...string) {
	for _, n := range names {
		withheld.Store(n, struct{}{})
	}
}

func withheldFrom(environ []string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if _, hide := withheld.Load(name); !hide {
			out = append(out, kv)
		}
	}
	return out
}

// environ is ralph's environment (less what is withheld) plus extra. Unless extra sets TMPDIR, the
// agent gets an empty temp directory of its own (returned: the call ends
// it): agents and the tools they run litter TMPDIR, and parallel loops must
// not share it.
func environ(extra []string) (env []string, tmp *callDir, err error) {
	env = append(withheldFrom(os.Environ()), extra...)
	// Marks the agent's processes, grandchildren too, as this ralph's, so a
	// restart after kill -9 can find and end them (LeftoverGroups).
	env = append(env, GroupEnv+"="+GroupToken())
	for _, kv := range extra {
		if strings.HasPrefix(kv, "TMPDIR=") {
			return env, nil, nil
		}
	}
	sweepLeftTmp()
	tmp, err = takeDir(tmpPattern(), true)
	if err != nil {
		return nil, nil, fmt.Errorf("agent: temp directory: %w", err)
	}
	return append(env, "TMPDIR="+tmp.path), tmp, nil
}
