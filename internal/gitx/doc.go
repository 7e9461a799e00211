// Package gitx reads a project's git state so the loop can tell whether an
// agent call made progress, and keeps optional backups of the working tree.
//
// Everything here shells out to the git binary (argv only, never a shell)
// instead of linking a git library: the user's git is the one that knows their
// config, hooks, filters, sparse checkouts and index format, and its answers
// are the ones the user sees. One exception, for speed: a call that moved
// no HEAD has its changed lines counted in-process from loose objects
// (sincelines.go), only when nothing git reads could make it count
// otherwise; else git's diff counts them.
//
// Progress: Snapshot is taken before an agent call and SnapshotAfter after it;
// Compare (pure) says what differs. A snapshot records HEAD and, for every
// path that is not clean (tracked changes, staged changes, untracked
// non-ignored files), a fingerprint of its state. Clean paths are implied by
// HEAD, so a snapshot costs one `git status` plus hashing the dirty files
// only — see hash.go for the cost model.
//
// ralph's own state (.ralph/ and .ralphrc, at the repository root and at the
// project directory) is excluded from snapshots, backups and rollbacks: it
// changes every iteration and is not the agent's work.
package gitx
