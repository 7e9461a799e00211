package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"ralph/internal/agent"
	"ralph/internal/store"
)

// agentGroups is .ralph/.agent_groups: which ralph runs here and the token
// its agents carry in their environment (agent.GroupEnv), written once when
// the run starts and removed when it ends. A ralph killed with -9 cannot
// stop its agent's grandchildren (the kernel only signals the direct
// child), so the next run reads this file and ends the process groups
// that still carry the token. Groups lists them by number, as older ralph
// versions recorded them at every call.
type agentGroups struct {
	PID    int    `json:"pid"`    // the ralph that started them
	Marker string `json:"marker"` // agent.GroupEnv's value in their environment
	Groups []int  `json:"groups,omitempty"`
}

// watchAgentGroups ends the agent processes a dead earlier run left behind
// (the caller holds the run lock, so no live ralph owns them), then records
// this run's token. The returned stop removes the file; the runners have
// ended every group before it is called.
func watchAgentGroups(st *store.Store, log io.Writer) (stop func()) {
	path := st.AgentGroupsFile()
	var old agentGroups
	switch err := store.ReadJSON(path, &old); {
	case err == nil:
		left := agent.MarkedGroups(old.Marker)
		if len(old.Groups) > 0 {
			left = agent.LeftoverGroups(old.Groups, old.Marker)
		}
		if len(left) > 0 {
			msg := fmt.Sprintf("ralph: ending the agent processes that an earlier run (pid %d) left running: process groups %v", old.PID, left)
			fmt.Fprintln(os.Stderr, msg)
			fmt.Fprintln(log, msg)
			if still := agent.EndGroups(left, nil); len(still) > 0 {
				fmt.Fprintf(os.Stderr, "ralph: warning: process groups %v survived SIGKILL\n", still)
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(os.Stderr, "ralph: warning: %v (ignored)\n", err)
	}
	// Not synced: the file only has to survive a kill of ralph, which
	// leaves the page cache alone; a crash of the machine leaves no agent
	// running to end. Written once, not at every call: the token finds
	// the groups.
	if err := store.WriteViewJSON(path, agentGroups{PID: os.Getpid(), Marker: agent.GroupToken()}); err != nil {
		fmt.Fprintf(os.Stderr, "ralph: warning: %v\n", err)
	}
	return func() { _ = os.Remove(path) }
}
