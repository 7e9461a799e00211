package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// tmpBase starts the name of every per-call temp directory; the owner's
// pid follows, so that the directories of a ralph that died before it could
// remove them (kill -9, a power cut) are known for what they are.
const tmpBase = "ralph-agent-"

// CallDirEnv names the per-call directory each agent call gets (mode 0700,
// removed after the call, swept like the temp directories after a kill):
// the one channel from a sandboxed agent to ralph. The sandbox binds it for
// that call alone; what ralph serves there is a unix socket, which works
// with the sandbox's network off: the gate (package gate) serves its
// approvals and questions there.
const CallDirEnv = "RALPH_CALL_DIR"

// BridgeEnv names the executable the agent's CLI starts to reach the gate
// (ralph itself, as `ralph mcp-bridge`): a sandbox keeps it visible,
// read-only, wherever it lives.
const BridgeEnv = "RALPH_MCP_BRIDGE"

func tmpPattern() string { return tmpBase + strconv.Itoa(os.Getpid()) + "-" }

var sweepOnce sync.Once

// sweepLeftTmp removes, once per process, the per-call temp directories
// that ralph processes now gone left in the temp directory.
func sweepLeftTmp() {
	sweepOnce.Do(func() { sweepTmp(os.TempDir(), alive) })
}

// sweepTmp removes the directories in dir named for a per-call temp
// directory whose owner is not alive. One of a live process is left alone,
// and so is one whose pid a later process reused: it is removed once that
// one is gone too.
func sweepTmp(dir string, alive func(pid int) bool) (removed int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tmpBase)
		if !ok || !e.IsDir() {
			continue
		}
		p, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(p)
		if !ok || err != nil || pid <= 0 || alive(pid) {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// alive reports whether a process pid exists (EPERM: it does, another
// user's).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || err == syscall.EPERM
}
