package gitx

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Recording what one `git status` saw, for the quick status of the next
// snapshot (quickstatus.go): the rules and the index read before git runs,
// the directories walked after it, each checked against git's answer.

// prepareQuick reads what git is about to read, before it runs: the
// rules and the index. Read before, a change racing with git is seen as a
// change next time. nil: this repository is not one the quick status
// models.
func prepareQuick(loc location, prev *quick) *quick {
	gitDir, commonDir := loc.gitDirs()
	if gitDir == "" || commonDir == "" {
		return nil
	}
	q := &quick{gitDir: gitDir, hashLen: sha1.Size}
	for _, c := range []string{filepath.Join(commonDir, "config"), filepath.Join(commonDir, "config.worktree"), filepath.Join(gitDir, "config.worktree")} {
		values, ok := readPlainConfig(c)
		if !ok || strings.EqualFold(values["core.ignorecase"], "true") {
			return nil
		}
		if strings.EqualFold(values["extensions.objectformat"], "sha256") {
			q.hashLen = sha256.Size
		}
		if !q.addRule(c) {
			return nil
		}
	}
	home := os.Getenv("HOME")
	if home == "" {
		return nil
	}
	// Attributes could convert line endings or filter content before git
	// compares it: none may exist (the work tree's are checked as it is
	// walked).
	for _, p := range []string{filepath.Join(home, ".config", "git", "attributes"), filepath.Join(commonDir, "info", "attributes")} {
		if r, _, ok := readRule(p); !ok || !r.absent {
			return nil
		}
		q.addRule(p)
	}
	for _, p := range []string{filepath.Join(home, ".config", "git", "ignore"), filepath.Join(commonDir, "info", "exclude")} {
		if !q.addRule(p) {
			return nil
		}
	}
	head, ok := q.addRuleContent(filepath.Join(gitDir, "HEAD"))
	if !ok {
		return nil
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok {
		if !strings.HasPrefix(ref, "refs/heads/") || !cleanIndexPath(ref) {
			return nil
		}
		if !q.addRule(filepath.Join(commonDir, filepath.FromSlash(ref))) || !q.addRule(filepath.Join(commonDir, "packed-refs")) {
			return nil
		}
	}

	q.indexPath = filepath.Join(gitDir, "index")
	fi, err := os.Lstat(q.indexPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		q.indexAbsent = true
		return q
	case err != nil || !fi.Mode().IsRegular():
		return nil
	}
	if q.indexStat, ok = statOf(fi); !ok {
		return nil
	}
	if prev != nil && !prev.indexAbsent && prev.indexPath == q.indexPath && prev.indexStat == q.indexStat && prev.hashLen == q.hashLen &&
		bytes.Equal(indexTrailer(q.indexPath, q.indexStat.size, q.hashLen), prev.indexSum) {
		// The index read last time, unchanged: its entries are kept.
		q.entries, q.indexSum = prev.entries, prev.indexSum
	} else {
		b, err := os.ReadFile(q.indexPath)
		if err != nil || int64(len(b)) != fi.Size() {
			return nil
		}
		if q.entries, err = parseIndex(b, q.hashLen); err != nil || len(q.entries) > quickMaxEntries {
			return nil
		}
		q.indexSum = b[len(b)-q.hashLen:]
	}
	// The tracked ignore files are read now, before git reads them; an
	// untracked one is found by the walk.
	for _, e := range q.entries {
		if path.Base(e.path) == ".gitignore" && !q.addRule(filepath.Join(loc.root, filepath.FromSlash(e.path))) {
			return nil
		}
	}
	return q
}

func (q *quick) addRule(p string) bool {
	_, ok := q.addRuleContent(p)
	return ok
}

// addRuleContent is addRule, returning what the file holds.
func (q *quick) addRuleContent(p string) ([]byte, bool) {
	r, b, ok := readRule(p)
	if ok {
		q.rules = append(q.rules, r)
	}
	return b, ok
}

// complete takes what git answered (st, with the ignored paths it listed)
// and walks the directories git walked. It returns nil when git's answer
// and the tree as walked do not agree (something changed while git ran)
// or hold something the quick status does not model. began is when git
// was started; read are directories the quick status read before it.
func (q *quick) complete(loc location, st status, began time.Time, prev *quick, read map[string]dirRead) *quick {
	if q == nil {
		return nil
	}
	q.head, q.branch = st.head, st.branch
	q.staged = map[string]stagedRec{}
	inIndex := func(p string) (indexEntry, bool) {
		i, ok := slices.BinarySearchFunc(q.entries, p, func(e indexEntry, p string) int { return strings.Compare(e.path, p) })
		if !ok {
			return indexEntry{}, false
		}
		return q.entries[i], true
	}
	untracked := map[string]bool{}
	for _, e := range st.entries {
		if e.meta == "?" {
			if strings.HasSuffix(e.path, "/") {
				return nil // a repository inside the work tree
			}
			q.untracked = append(q.untracked, e.path)
			untracked[e.path] = true
			continue
		}
		f := strings.Split(e.meta, " ")
		if len(f) != 8 || f[0] != "1" || f[2] != "N..." {
			return nil
		}
		x, mI, hI := f[1][0], f[4], f[7]
		ie, ok := inIndex(e.path)
		if x == 'D' {
			if ok || f[1][1] != '.' {
				return nil
			}
			q.gone = append(q.gone, e)
			continue
		}
		// The index git read must be the one read before it.
		if !ok || mI != fmt.Sprintf("%06o", ie.mode) || hI != ie.oid {
			return nil
		}
		if x != '.' {
			q.staged[e.path] = stagedRec{x: x, mH: f[3], hH: f[6]}
		}
	}
	ignored := map[string]bool{}
	for _, p := range st.ignored {
		ignored[p] = true
	}

	// The walk: every entry of every directory git walked must be one git
	// accounted for (tracked, untracked or ignored), or it came while git
	// ran. A directory the previous walk saw settled and whose stat has
	// not moved since has the same entries: it is not read again (a
	// change while git ran would have moved its stat). found are the
	// untracked files seen, reused the directories not read.
	prevDirs := map[string]watchedDir{}
	if prev != nil {
		for _, d := range prev.dirs {
			prevDirs[d.rel] = d
		}
	}
	found := map[string]bool{}
	reused := map[string]bool{}
	// ignoreFile takes an untracked .gitignore as a rule: one changed
	// around git's run may not be the one git read.
	ignoreFile := func(abs string) bool {
		r, _, ok := readRule(abs)
		if !ok || r.absent {
			return false
		}
		fi, err := os.Lstat(abs)
		if err != nil {
			return false
		}
		if gs, ok := statOf(fi); !ok || !gs.settled(began) {
			return false
		}
		q.rules = append(q.rules, r)
		return true
	}
	var walk func(rel string) bool
	// descend walks a child directory, unless git left it out as ignored.
	descend := func(p string) bool {
		if ignored[p+"/"] {
			// Nothing tracked may be under an ignored directory git did
			// not walk.
			i, _ := slices.BinarySearchFunc(q.entries, p+"/", func(e indexEntry, p string) int { return strings.Compare(e.path, p) })
			return i >= len(q.entries) || !strings.HasPrefix(q.entries[i].path, p+"/")
		}
		return walk(p)
	}
	walk = func(rel string) bool {
		abs := filepath.Join(loc.root, filepath.FromSlash(rel))
		now := time.Now()
		fi, err := os.Lstat(abs)
		if err != nil || !fi.IsDir() {
			return false
		}
		sid, ok := statOf(fi)
		if !ok {
			return false
		}
		join := func(name string) string {
			if rel == "" {
				return name
			}
			return rel + "/" + name
		}
		if pd, ok := prevDirs[rel]; ok && pd.settled && pd.stat == sid {
			reused[rel] = true
			q.dirs = append(q.dirs, pd)
			if pd.ignoreFile {
				if _, tracked := inIndex(join(".gitignore")); !tracked && !ignoreFile(filepath.Join(abs, ".gitignore")) {
					return false
				}
			}
			for _, s := range pd.subdirs {
				if !descend(s) {
					return false
				}
			}
			return true
		}
		var ents []fs.DirEntry
		if r, ok := read[rel]; ok {
			sid, now, ents = r.stat, r.at, r.ents
		} else if ents, err = os.ReadDir(abs); err != nil {
			return false
		}
		d := watchedDir{rel: rel, stat: sid, settled: sid.settled(now), names: dirDigest(loc, rel, ents)}
		for _, e := range ents {
			name := e.Name()
			p := join(name)
			if name == ".git" {
				if rel != "" {
					return false // a repository inside the work tree
				}
				continue
			}
			if loc.excluded(p) {
				continue
			}
			switch t := e.Type(); {
			case t.IsDir():
				d.subdirs = append(d.subdirs, p)
			case t.IsRegular() || t&fs.ModeSymlink != 0:
				_, tracked := inIndex(p)
				switch {
				case name == ".gitattributes":
					return false
				case !tracked && !untracked[p] && !ignored[p]:
					return false
				case untracked[p]:
					found[p] = true
				}
				if name == ".gitignore" {
					d.ignoreFile = true
					if !tracked && !ignoreFile(filepath.Join(abs, name)) {
						return false
					}
				}
			default:
				return false
			}
		}
		q.dirs = append(q.dirs, d)
		for _, s := range d.subdirs {
			if !descend(s) {
				return false
			}
		}
		return true
	}
	if !walk("") {
		return nil
	}
	for _, u := range q.untracked {
		dir := path.Dir(u)
		if dir == "." {
			dir = ""
		}
		if !found[u] && !reused[dir] {
			return nil
		}
	}
	return q
}

// dirDigest digests a directory's entries as the quick status sees them:
// names and whether each is a directory, the repository's own and ralph's
// state left out.
func dirDigest(loc location, rel string, ents []fs.DirEntry) [sha256.Size]byte {
	h := sha256.New()
	for _, d := range ents {
		p := d.Name()
		if rel != "" {
			p = rel + "/" + p
		}
		if rel == "" && d.Name() == ".git" || loc.excluded(p) {
			continue
		}
		kind := "f"
		switch t := d.Type(); {
		case t.IsDir():
			kind = "d"
		case t&fs.ModeSymlink != 0:
			kind = "l"
		case !t.IsRegular():
			kind = "s"
		}
		h.Write([]byte(kind + d.Name() + "\x00"))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
