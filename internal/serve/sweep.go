package serve

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"ralph/internal/store"
)

// homeTempAge is how old a temporary file in RALPH_HOME must be before the
// daemon takes it for a killed writer's. The daemon holds RALPH_HOME's lock,
// so its own writers are all dead when it starts; the only other writer
// there is a `ralph worker` sharing the home, whose atomic writes take
// milliseconds. A minute spares those and clears what a crash left before
// a restart that came later than that; the sweep is repeated once that
// minute has passed, for a restart that came sooner.
const homeTempAge = time.Minute

// sweepDirs are where the daemon's atomic writes go in RALPH_HOME: its top
// (api-token), the task files and their archive, the prompts, and each
// session's logs (clarification.md). requests/ holds people's trees and is
// never swept.
func (h Home) sweepDirs() []string {
	dirs := []string{string(h), filepath.Join(string(h), "handoffs"), filepath.Join(string(h), "handoffs", "archive"),
		filepath.Join(string(h), "prompts"), filepath.Join(string(h), "logs")}
	entries, _ := os.ReadDir(filepath.Join(string(h), "logs"))
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(string(h), "logs", e.Name()))
		}
	}
	return dirs
}

// sweepTemps removes the temporaries killed writers left in RALPH_HOME
// (store.IsTempName: only names ralph's atomic writer makes) and logs them.
func (d *Daemon) sweepTemps(now time.Time) {
	var removed []string
	for _, dir := range d.opts.Home.sweepDirs() {
		r, err := store.RemoveStaleTemps(dir, homeTempAge, now)
		removed = append(removed, r...)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logf("sweep %s: %v", dir, err)
		}
	}
	for _, p := range removed {
		d.logf("removed %s, left by a writer that was killed", p)
	}
}

// missing reports a path that does not exist.
func missing(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}
