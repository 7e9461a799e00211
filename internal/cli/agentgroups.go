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

// agentGroups is .ralph/.agent_groups: the process groups of the agents a
// run has going, kept while they run. A ralph killed with -9 cannot stop
// its agent's grandchildren (the kernel only signals the direct child), so
// the next run reads this file and ends what is left.
type agentGroups struct {
	PID    int    `json:"pid"`    // the ralph that started them
	Marker string `json:"marker"` // agent.GroupEnv's value in their environment
	Groups []int  `json:"groups"`
}

// watchAgentGroups ends the agent processes a dead earlier run left behind
// (the caller holds the run lock, so no live ralph owns them), then keeps
// the file current while this run's agents come and go. The returned stop
// removes the file; the runners have ended every group before it is called.
func watchAgentGroups(st *store.Store, log io.Writer) (stop func()) {
	path := st.AgentGroupsFile()
	var old agentGroups
	switch err := store.ReadJSON(path, &old); {
	case err == nil:
		if left := agent.LeftoverGroups(old.Groups, old.Marker); len(left) > 0 {
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
	_ = os.Remove(path)
	agent.OnGroupsChange(func(live []int, marker string) {
		if len(live) == 0 {
			_ = os.Remove(path)
			return
		}
		// Not synced: the file only has to survive a kill of ralph, which
		// leaves the page cache alone; a crash of the machine leaves no
		// agent running to end.
		if err := store.WriteViewJSON(path, agentGroups{PID: os.Getpid(), Marker: marker, Groups: live}); err != nil {
			fmt.Fprintf(os.Stderr, "ralph: warning: %v\n", err)
		}
	})
	return func() {
		agent.OnGroupsChange(nil)
		_ = os.Remove(path)
	}
}
