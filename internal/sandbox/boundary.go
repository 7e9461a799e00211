package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"ralph/internal/agent"
	"ralph/internal/gitx"
)

// CallDirEnv is the per-call directory the runner makes (agent.CallDirEnv)
// and Wrap binds for that call alone: the one channel a sandboxed agent has
// to ralph, a unix socket there, usable with the network off. Another
// call's directory is not visible, and the API's token is not readable.
const CallDirEnv = agent.CallDirEnv

// hideArgs hides Spec.Hide. Paths that hold the project are hidden before
// it is bound (so it comes back on top); the others after, so that a path
// inside the project (a RALPH_HOME kept there) stays hidden too.
func (s *Sandbox) hideArgs(project string) (before, after []string) {
	if real, err := filepath.EvalSymlinks(project); err == nil {
		project = real
	}
	for _, h := range s.Hide {
		if h == "" || !filepath.IsAbs(h) {
			continue
		}
		// bwrap mounts over what a link points at: name that.
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		}
		if h == "/" || h == project {
			continue // never the whole file system; the project is the agent's
		}
		args := hidePath(h)
		if args == nil {
			continue
		}
		if under(project, h) {
			before = append(before, args...)
		} else {
			after = append(after, args...)
		}
	}
	return before, after
}

// hidePath is a tmpfs over a directory, an empty read-only file over a
// file: not bound at all, rather than unreadable by permission (the agent
// runs as the same user).
func hidePath(p string) []string {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return []string{"--tmpfs", p}
	default:
		return []string{"--ro-bind", "/dev/null", p}
	}
}

// callDirArgs binds the call's temp directory and its channel directory.
// Their parent (the temp directory of ralph, where other calls' directories
// live) is hidden first unless the sandbox hides it already.
func callDirArgs(project, tmp, call string) []string {
	var w []string
	hidden := map[string]bool{"/tmp": true}
	for _, d := range []string{tmp, call} {
		if d == "" || !filepath.IsAbs(d) || !exists(d) {
			continue
		}
		parent := filepath.Dir(d)
		if !hidden[parent] && parent != "/" && filepath.Dir(parent) != "/" && parent != project {
			w = append(w, "--tmpfs", parent)
			hidden[parent] = true
		}
		w = append(w, "--bind", d, d)
	}
	return w
}

// gitArgs keeps the agent's own git working while it cannot change what
// ralph's git on the host will run. The git directory is bound so that it
// is a mount point (it cannot be renamed or replaced with a repository of
// the agent's), objects, refs, the index and HEAD stay writable, and the
// files that name programs or redirect git are read-only: the
// configuration, hooks/, info/, commondir, and a worktree's .git file.
// For a request's worktree the common directory lives in the hidden
// RALPH_HOME: it is bound here, with the other requests' entries under
// worktrees/ read-only.
func gitArgs(project string) []string {
	d, ok := gitx.Pinned(project)
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		if d, ok, err = gitx.Resolve(ctx, project); err != nil || !ok {
			return nil
		}
	}
	var w []string
	ro := func(p string) {
		if _, err := os.Lstat(p); err == nil {
			w = append(w, "--ro-bind", p, p)
		}
	}
	w = append(w, "--bind", d.CommonDir, d.CommonDir)
	for _, f := range []string{"config", "config.worktree", "commondir", "hooks", "info"} {
		ro(filepath.Join(d.CommonDir, f))
	}
	if d.Linked() {
		ro(filepath.Join(d.CommonDir, "worktrees"))
		w = append(w, "--bind", d.GitDir, d.GitDir)
		for _, f := range []string{"config.worktree", "commondir", "gitdir"} {
			ro(filepath.Join(d.GitDir, f))
		}
	}
	if d.GitFile != "" {
		ro(d.GitFile)
	}
	return w
}
