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

// A loop calls its agent one call after another, and making and removing
// two directories per call is a measurable part of its own cost (on ext4
// without a journal, each new inode makes the allocator step over every
// one freed in the last half minute). While a run keeps them
// (KeepCallDirs), a call's temp and call directories are emptied when it
// ends and handed to the next call instead: what the agent left there
// still goes with its call, only the empty directory stays. A directory
// that is no longer the one made (replaced, a link, another mode) is
// removed as before, never emptied through.
var kept struct {
	sync.Mutex
	on    bool
	spare map[string][]keptDir // by name prefix: the temp or the call kind
}

type keptDir struct {
	path string
	info os.FileInfo
}

// KeepCallDirs makes the agent calls of this process reuse their emptied
// directories until release, which removes them. For a process that runs
// its calls one after another (ralph run); calls at the same time each get
// their own.
func KeepCallDirs() (release func()) {
	kept.Lock()
	kept.on = true
	kept.Unlock()
	return func() {
		kept.Lock()
		spare := kept.spare
		kept.on, kept.spare = false, nil
		kept.Unlock()
		for _, ds := range spare {
			for _, d := range ds {
				_ = os.RemoveAll(d.path)
			}
		}
	}
}

// callDir is a directory of one call: made for it, or kept from an earlier
// one and emptied.
type callDir struct {
	keptDir
	prefix string
	reuse  bool
}

// takeDir gives a call an empty 0700 directory named prefix…, kept from an
// earlier call when reuse is allowed and a run keeps them.
func takeDir(prefix string, reuse bool) (*callDir, error) {
	if reuse {
		kept.Lock()
		if ds := kept.spare[prefix]; kept.on && len(ds) > 0 {
			d := ds[len(ds)-1]
			kept.spare[prefix] = ds[:len(ds)-1]
			kept.Unlock()
			return &callDir{keptDir: d, prefix: prefix, reuse: true}, nil
		}
		kept.Unlock()
	}
	path, err := os.MkdirTemp("", prefix) // 0700
	if err != nil {
		return nil, err
	}
	info, err := os.Lstat(path)
	if err != nil {
		_ = os.RemoveAll(path)
		return nil, err
	}
	return &callDir{keptDir: keptDir{path, info}, prefix: prefix, reuse: reuse}, nil
}

// done ends the directory's call: emptied and kept for the next call, or
// removed.
func (d *callDir) done() {
	if d.reuse && emptyDir(d.path, d.info) {
		kept.Lock()
		if kept.on {
			if kept.spare == nil {
				kept.spare = map[string][]keptDir{}
			}
			kept.spare[d.prefix] = append(kept.spare[d.prefix], d.keptDir)
			kept.Unlock()
			return
		}
		kept.Unlock()
	}
	_ = os.RemoveAll(d.path)
}

// emptyDir removes everything in dir, inside it (os.Root: no link is
// followed out), if dir is still the directory first made there, with its
// mode; it reports whether dir is that directory and now empty.
func emptyDir(dir string, was os.FileInfo) bool {
	info, err := os.Lstat(dir)
	if err != nil || !os.SameFile(info, was) || info.Mode() != was.Mode() {
		return false
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer r.Close()
	// The directory opened is the one checked, not one swapped in since.
	if info, err := r.Stat("."); err != nil || !os.SameFile(info, was) {
		return false
	}
	f, err := r.Open(".")
	if err != nil {
		return false
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return false
	}
	for _, n := range names {
		if r.RemoveAll(n) != nil {
			return false
		}
	}
	return true
}
