package store

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Per-iteration logs are logs/iteration_<N>_<UTC start>.stdout.log and
// .stderr.log: the agent's raw output, kept for the analyzer to re-read and
// for people to debug a decision.
const (
	StdoutSuffix = ".stdout.log"
	StderrSuffix = ".stderr.log"

	// DefaultIterationLogKeep is how many iterations' logs are kept.
	DefaultIterationLogKeep = 200
)

// iterLogRE parses the names IterationLogBase makes; nothing else in logs/
// is ever pruned.
var iterLogRE = regexp.MustCompile(`^iteration_(\d{1,18})_(\d{8}T\d{6}Z)(` +
	regexp.QuoteMeta(StdoutSuffix) + `|` + regexp.QuoteMeta(StderrSuffix) + `)$`)

// IterationLogName is what an iteration log's file name says.
type IterationLogName struct {
	N      int64
	Start  string // UTC, compact (20261121T012759Z): sorts as time when compared as text
	Suffix string // StdoutSuffix or StderrSuffix
}

// ParseIterationLogName reads a name IterationLogs made; ok is false for
// any other file.
func ParseIterationLogName(name string) (IterationLogName, bool) {
	m := iterLogRE.FindStringSubmatch(name)
	if m == nil {
		return IterationLogName{}, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return IterationLogName{}, false
	}
	return IterationLogName{N: n, Start: m[2], Suffix: m[3]}, true
}

// IterationLogBase is the common part of iteration n's log names.
func IterationLogBase(n int, start time.Time) string {
	return fmt.Sprintf("iteration_%d_%s", n, start.UTC().Format(compactTime))
}

// PruneIterationLogs deletes the logs of all but the newest keep iterations
// in dir and returns the paths it removed. Age comes from the names, never
// from modification times, which copying, checkouts and touch change: the
// higher iteration number is newer, and for equal numbers (a later run that
// counted from 1 again) the later start time. The engine is expected to
// number iterations on from the previous run's loop count, so that a new run
// never looks older than an old one. An iteration's stdout and stderr logs
// count as one and go together. keep <= 0 turns retention off.
func PruneIterationLogs(dir string, keep int) ([]string, error) {
	removed, _, err := pruneIterationLogs(dir, keep, false)
	return removed, err
}

// PruneIterationLogsByTime is PruneIterationLogs where the numbers start
// again at 1 (a daemon session numbers each task's loops from 1): the
// later start is newer, then the higher number.
func PruneIterationLogsByTime(dir string, keep int) ([]string, error) {
	removed, _, err := pruneIterationLogs(dir, keep, true)
	return removed, err
}

// logCount is what a Store knows of its logs directory: how many
// iterations' logs a listing left, and how many it has named since.
type logCount struct {
	mu          sync.Mutex
	left, since int
	known       bool
}

func (c *logCount) named() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.since++
	c.mu.Unlock()
}

func (c *logCount) listed(left int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.left, c.since, c.known = left, 0, true
	c.mu.Unlock()
}

// within reports that the directory cannot hold more than keep
// iterations' logs (keep <= 0: retention is off).
func (c *logCount) within(keep int) bool {
	if keep <= 0 {
		return true
	}
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.known && c.left+c.since <= keep
}

// pruneIterationLogs also returns how many iterations' logs are left.
func pruneIterationLogs(dir string, keep int, byTime bool) (removed []string, left int, err error) {
	if keep <= 0 {
		return nil, 0, nil
	}
	// Deleting follows the directory: a logs directory swapped for a link
	// (by a sandboxed agent, mid-run) must not lead the deletions out.
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return nil, 0, fmt.Errorf("prune iteration logs: %w", &SymlinkError{Path: dir})
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("prune iteration logs: %w", err)
	}
	type iteration struct {
		n     int64
		start string // compactTime sorts as text
		names []string
	}
	byKey := map[string]*iteration{}
	for _, e := range entries {
		ln, ok := ParseIterationLogName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		key := strconv.FormatInt(ln.N, 10) + "_" + ln.Start
		it := byKey[key]
		if it == nil {
			it = &iteration{n: ln.N, start: ln.Start}
			byKey[key] = it
		}
		it.names = append(it.names, e.Name())
	}
	if len(byKey) <= keep {
		return nil, len(byKey), nil
	}
	its := make([]*iteration, 0, len(byKey))
	for _, it := range byKey {
		its = append(its, it)
	}
	slices.SortFunc(its, func(a, b *iteration) int { // newest first
		if byTime {
			return cmp.Or(cmp.Compare(b.start, a.start), cmp.Compare(b.n, a.n))
		}
		return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(b.start, a.start))
	})
	var errs []error
	for _, it := range its[keep:] {
		for _, name := range it.names {
			p := filepath.Join(dir, name)
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, p)
		}
	}
	slices.Sort(removed)
	if err := errors.Join(errs...); err != nil {
		return removed, 0, fmt.Errorf("prune iteration logs: %w", err)
	}
	return removed, keep, nil
}
