package doctor

import (
	"ralph/internal/proc"

	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"time"

	"ralph/internal/agent/agents"
	"ralph/internal/gitx"
)

// System is the real machine: ralph's own environment and PATH, child
// processes, the git binary through package gitx, and the file system.
func System() Env {
	return Env{
		OS:           runtime.GOOS,
		Now:          time.Now,
		LookupEnv:    os.LookupEnv,
		HomeDir:      os.UserHomeDir,
		LookPath:     exec.LookPath,
		Run:          runCommand,
		Stat:         os.Stat,
		FreeBytes:    freeBytes,
		ProcessAlive: proc.Alive,
		Agents:       func(ctx context.Context) []agents.Found { return agents.Detect(ctx, exec.LookPath) },
		Git: Git{
			IsRepo:        gitx.IsRepo,
			Root:          gitx.Root,
			IsClean:       gitx.IsClean,
			CurrentBranch: gitx.CurrentBranch,
			DirtyPaths:    dirtyPaths,
			Identity:      gitx.Identity,
		},
	}
}

// maxOutput bounds what a command may print into memory; a version is a
// line, anything beyond is noise.
const maxOutput = 64 << 10

// runCommand runs argv without a shell, stdin from /dev/null (a nil Stdin
// is the null device), and gives up when ctx ends. WaitDelay stops the wait
// for output pipes that a grandchild (npx's node) may still hold open after
// the child was killed.
func runCommand(ctx context.Context, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	return out.String(), err
}

// limitedBuffer keeps the first maxOutput bytes and discards the rest
// while reporting them written, so the child never blocks on a full pipe.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// dirtyPaths lists the paths a snapshot sees as not clean, which already
// leaves ralph's own state out.
func dirtyPaths(ctx context.Context, dir string) ([]string, error) {
	s, err := gitx.Snapshot(ctx, dir)
	if err != nil {
		return nil, err
	}
	return s.ChangedPaths(), nil
}
