package agent

import (
	"os/exec"
	"runtime"
	"sync"
)

// Every agent is started from one goroutine locked to its OS thread for
// the life of the process. Pdeathsig (Linux) fires when the thread that
// forked the child exits, not the process: forked from an ordinary
// goroutine, an agent could be told to stop whenever the runtime retires
// that thread. Pinning the thread of each call until its agent was reaped
// kept one OS thread per running agent (208 at the peak of a daemon with
// 200 loops, each a scheduling cost the API's requests waited behind);
// one pinned thread that never exits gives the same guarantee, the agent
// dies with ralph and only then, for any number of agents. Waiting for
// the agent happens on any thread.
var spawner struct {
	once sync.Once
	jobs chan spawnJob
}

type spawnJob struct {
	cmd  *exec.Cmd
	done chan error
}

// startPinned starts cmd on the spawner's thread.
func startPinned(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.jobs = make(chan spawnJob)
		go func() {
			// Never unlocked and never returns: the thread lives as long as
			// the process.
			runtime.LockOSThread()
			for j := range spawner.jobs {
				j.done <- j.cmd.Start()
			}
		}()
	})
	j := spawnJob{cmd: cmd, done: make(chan error, 1)}
	spawner.jobs <- j
	return <-j.done
}
