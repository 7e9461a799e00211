package gitx

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A loop's snapshots follow one another: the one after call N is the one
// before call N+1, and between two calls usually only the files the agent
// edited changed. The quick status answers what `git status` would, with no
// git process, whenever it can prove that nothing git's answer depends on
// changed in a way it does not model: the rules git read (HEAD and its
// branch, the configuration, the ignore files, no attributes anywhere), the
// index (by its checksum), and every directory git walked (a directory's
// entries change its stat; a recent one is read again). What is left is
// git's own comparison of each index entry with its file: the stat data
// the index caches, and when they differ (or are too recent to trust) the
// file's object name. Anything else — a new or removed file, a commit, a
// staged change, a changed rule, a conflict, a submodule — and git is asked,
// which also records what the next quick status starts from.

// quickSlack is how old a stat must be for an equal stat later to prove
// nothing changed: a change in the same tick of the file system's clock
// keeps mtime and ctime (git calls such files racy). Two seconds covers the
// coarsest clocks git supports.
const quickSlack = 2 * time.Second

// quickMaxFile is the largest tracked file hashed in-process to tell
// whether it still matches the index; past it git is asked.
const quickMaxFile = 32 << 20

// quickMaxEntries is the largest index the quick status keeps: a daemon
// holds one per loop, and on a tree that big git's own walk is most of the
// cost anyway.
var quickMaxEntries = 20000

// quickMaxRule is the largest rule file (configuration, ignore file, HEAD,
// packed refs) kept to compare; past it the quick status is not used.
const quickMaxRule = 1 << 20

// statID is what an lstat says changes with any write to a file or any
// change of a directory's entries.
type statID struct {
	dev, ino, nlink uint64
	mode            uint32
	size            int64
	mtime, ctime    int64
}

func statOf(fi fs.FileInfo) (statID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statID{}, false
	}
	return statID{dev: uint64(st.Dev), ino: st.Ino, nlink: uint64(st.Nlink), mode: st.Mode, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// settled reports whether the stat is old enough, at t, for an equal stat
// later to mean no change.
func (s statID) settled(t time.Time) bool {
	edge := t.Add(-quickSlack).UnixNano()
	return s.mtime < edge && s.ctime < edge
}

// ruleFile is a file git read for its answer, kept by a digest of its
// bytes: the same bytes later mean the same rules. absent is a file that
// did not exist.
type ruleFile struct {
	path   string
	absent bool
	sum    [sha256.Size]byte
}

// readRule reads a rule file as it is now, with its content; ok is false
// when it cannot be kept (not a regular file, too big, unreadable).
func readRule(p string) (ruleFile, []byte, bool) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return ruleFile{path: p, absent: true}, nil, true
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > quickMaxRule {
		return ruleFile{}, nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) > quickMaxRule {
		return ruleFile{}, nil, false
	}
	return ruleFile{path: p, sum: sha256.Sum256(b)}, b, true
}

func (r ruleFile) same() bool {
	now, _, ok := readRule(r.path)
	return ok && now == r
}

// watchedDir is a directory git walked for untracked files, by its stat
// and a digest of its entries.
type watchedDir struct {
	rel     string // root-relative, "" for the root
	stat    statID
	settled bool
	names   [sha256.Size]byte
	// subdirs are its directories (root-relative), ignoreFile whether it
	// has a .gitignore: what a walk that finds it unchanged needs.
	subdirs    []string
	ignoreFile bool
}

// dirRead is a directory's entries as read before git ran, and its stat
// taken before them: the walk after git takes them as its own (a change in
// between makes them disagree with git's answer, and nothing is recorded).
type dirRead struct {
	stat statID
	at   time.Time
	ents []fs.DirEntry
}

// stagedRec is what a path's record says of HEAD against the index.
type stagedRec struct {
	x      byte
	mH, hH string
}

// quick is what one `git status` saw, for the next snapshot's quick
// status. It is never changed once made: a quick status that holds makes
// a new one.
type quick struct {
	gitDir  string
	hashLen int
	head    string
	branch  string
	rules   []ruleFile
	// The index as read before git ran: its stat, its checksum (the last
	// hashLen bytes) and its entries.
	indexPath   string
	indexAbsent bool
	indexStat   statID
	indexSum    []byte
	entries     []indexEntry
	// staged are the paths whose HEAD and index differ, gone the records
	// of paths deleted from the index, untracked the untracked files.
	staged    map[string]stagedRec
	gone      []statusEntry
	untracked []string
	dirs      []watchedDir
}

// status is git's answer without git, and the quick state for the next
// snapshot; ok is false when git must be asked. A directory whose entries
// it found changed goes into read (if not nil), for the walk after git.
func (q *quick) status(loc location, read map[string]dirRead) (st status, next *quick, ok bool) {
	if q == nil {
		return status{}, nil, false
	}
	next = &quick{}
	*next = *q
	next.dirs = make([]watchedDir, len(q.dirs))
	for i, d := range q.dirs {
		abs := filepath.Join(loc.root, filepath.FromSlash(d.rel))
		now := time.Now()
		fi, err := os.Lstat(abs)
		if err != nil || !fi.IsDir() {
			return status{}, nil, false
		}
		sid, ok := statOf(fi)
		if !ok {
			return status{}, nil, false
		}
		if !d.settled || sid != d.stat {
			ents, err := os.ReadDir(abs)
			if err != nil {
				return status{}, nil, false
			}
			if dirDigest(loc, d.rel, ents) != d.names {
				if read != nil {
					read[d.rel] = dirRead{stat: sid, at: now, ents: ents}
				}
				return status{}, nil, false
			}
			d.stat, d.settled = sid, sid.settled(now)
		}
		next.dirs[i] = d
	}
	// The rules and the index after the directories: a call that made or
	// removed a file, the commonest reason to ask git, is told cheapest.
	for _, r := range q.rules {
		if !r.same() {
			return status{}, nil, false
		}
	}
	idx, ok := q.sameIndex()
	if !ok {
		return status{}, nil, false
	}

	rootFD, err := unix.Open(loc.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return status{}, nil, false
	}
	defer unix.Close(rootFD)
	st = status{head: q.head, branch: q.branch}
	for _, e := range q.entries {
		if loc.excluded(e.path) {
			continue
		}
		y, mW, ok := q.worktree(loc.root, rootFD, e, idx)
		if !ok {
			return status{}, nil, false
		}
		s, staged := q.staged[e.path]
		if !staged && y == '.' {
			continue
		}
		mI := fmt.Sprintf("%06o", e.mode)
		x, mH, hH := byte('.'), mI, e.oid
		if staged {
			x, mH, hH = s.x, s.mH, s.hH
		}
		mWs := mI
		switch y {
		case 'D':
			mWs = "000000"
		case 'M':
			mWs = fmt.Sprintf("%06o", mW)
		}
		st.entries = append(st.entries, statusEntry{path: e.path,
			meta:         "1 " + string([]byte{x, y}) + " N... " + mH + " " + mI + " " + mWs + " " + hH + " " + e.oid,
			hashWorktree: y == 'M'})
	}
	st.entries = append(st.entries, q.gone...)
	// git lists changed tracked paths in path order, then the untracked.
	slices.SortStableFunc(st.entries, func(a, b statusEntry) int { return strings.Compare(a.path, b.path) })
	for _, p := range q.untracked {
		st.entries = append(st.entries, statusEntry{path: p, meta: "?", hashWorktree: true})
	}
	return st, next, true
}

// sameIndex reports whether the index is the one read before git ran,
// and returns its mtime now: git's test of a racy entry uses it.
func (q *quick) sameIndex() (mtime int64, ok bool) {
	fi, err := os.Lstat(q.indexPath)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, q.indexAbsent
	}
	if err != nil || q.indexAbsent || !fi.Mode().IsRegular() {
		return 0, false
	}
	sid, ok := statOf(fi)
	if !ok || sid.size != q.indexStat.size {
		return 0, false
	}
	if sid != q.indexStat && !bytes.Equal(indexTrailer(q.indexPath, sid.size, q.hashLen), q.indexSum) {
		// Rewritten with another content (the same content keeps its
		// checksum).
		return 0, false
	}
	return sid.mtime, true
}

// indexTrailer is the checksum that ends an index file of size bytes
// (nil if it cannot be read).
func indexTrailer(p string, size int64, hashLen int) []byte {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	sum := make([]byte, hashLen)
	if _, err := f.ReadAt(sum, size-int64(hashLen)); err != nil {
		return nil
	}
	return sum
}

// worktree is git's comparison of an index entry with its file (looked
// up from root, whose descriptor is rootFD): the Y of the status record
// and the file's mode. ok is false for what git must judge (a type
// change, a directory where a file was, a file too big).
func (q *quick) worktree(root string, rootFD int, e indexEntry, indexMtime int64) (y byte, mW uint32, ok bool) {
	var st unix.Stat_t
	err := unix.Fstatat(rootFD, e.path, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return 'D', 0, true
	}
	if err != nil {
		return 0, 0, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		mW = modeFile
		if st.Mode&0o100 != 0 {
			mW = modeExec
		}
		if e.mode == modeSymlink {
			return 0, 0, false
		}
	case unix.S_IFLNK:
		mW = modeSymlink
		if e.mode != modeSymlink {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
	same := mW == e.mode && uint32(st.Ctim.Sec) == e.ctimeS && uint32(st.Ctim.Nsec) == e.ctimeNS &&
		uint32(st.Mtim.Sec) == e.mtimeS && uint32(st.Mtim.Nsec) == e.mtimeNS &&
		uint32(st.Dev) == e.dev && uint32(st.Ino) == e.ino && st.Uid == e.uid && st.Gid == e.gid &&
		uint32(st.Size) == e.size
	// Racy, as git has it: changed no earlier than the index was written
	// (both times from the file system's clock), so the cached stat cannot
	// vouch for the content.
	racy := indexMtime <= int64(e.mtimeS)*int64(time.Second)+int64(e.mtimeNS)
	if same && !racy {
		return '.', mW, true
	}
	if mW != e.mode {
		return 'M', mW, true
	}
	abs := filepath.Join(root, filepath.FromSlash(e.path))
	var content []byte
	if mW == modeSymlink {
		target, err := os.Readlink(abs)
		if err != nil {
			return 0, 0, false
		}
		content = []byte(target)
	} else {
		if st.Size > quickMaxFile {
			return 0, 0, false
		}
		if content, err = readPlain(abs, st.Dev, st.Ino); err != nil {
			return 0, 0, false
		}
	}
	if blobName(content, q.hashLen) == e.oid {
		return '.', mW, true
	}
	return 'M', mW, true
}

// readPlain reads a regular file that must still be the one (dev, ino)
// named.
func readPlain(abs string, dev, ino uint64) ([]byte, error) {
	// O_NONBLOCK: a FIFO put there since the stat must not hang the loop.
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Dev != dev || st.Ino != ino || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errors.New(abs + ": replaced while read")
	}
	b, err := io.ReadAll(io.LimitReader(f, quickMaxFile+1))
	if err == nil && len(b) > quickMaxFile {
		err = errTooBig
	}
	return b, err
}

// blobName is the object name git gives content as a blob.
func blobName(content []byte, hashLen int) string {
	var h hash.Hash = sha1.New()
	if hashLen == sha256.Size {
		h = sha256.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}
