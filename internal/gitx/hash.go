package gitx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// Hashing limits. A snapshot hashes only dirty and untracked files, but an
// agent can drop a multi-gigabyte file into the tree; these caps keep every
// snapshot bounded in time whatever the tree holds.
const (
	// hashCap is how much of one file is hashed. Files up to this size are
	// fingerprinted by content alone, so touching one without editing it is
	// not progress. Larger files are fingerprinted by their first hashCap
	// bytes plus size and mtime: an edit past the cap that keeps the size
	// is still seen through the mtime.
	hashCap = 8 << 20
	// hashBudget is how much one snapshot reads in total. Files past the
	// budget (in git's path order, so the same files each time) get size
	// and mtime only.
	hashBudget = 256 << 20
)

// job is one file to fingerprint with how many bytes of it to read.
type job struct {
	path string
	info fs.FileInfo
	n    int64
}

// fingerprintFiles returns a fingerprint of the working-tree state of each
// root-relative path. It stats every path first, which decides
// deterministically how many bytes each may read, then hashes in parallel:
// the work is I/O- and SHA-bound and files are independent.
func fingerprintFiles(ctx context.Context, root string, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	var jobs []job
	budget := int64(hashBudget)
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		switch {
		case err != nil:
			// Gone between git status and now: a state of its own.
			out[p] = "missing"
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(filepath.Join(root, filepath.FromSlash(p)))
			if err != nil {
				target = "?" + err.Error()
			}
			out[p] = "link:" + target
		case fi.IsDir():
			// An untracked nested repository, listed by git as one entry.
			out[p] = "dir"
		case !fi.Mode().IsRegular():
			// FIFOs and sockets: never open them, a FIFO would block.
			out[p] = "special:" + fi.Mode().String()
		default:
			n := min(fi.Size(), hashCap, budget)
			budget -= n
			jobs = append(jobs, job{path: p, info: fi, n: n})
		}
	}
	if len(jobs) == 0 {
		return out, nil
	}

	workers := min(runtime.GOMAXPROCS(0), 8, len(jobs))
	sums := make([]string, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for i := range next {
				sums[i] = hashFile(root, jobs[i], buf)
			}
		})
	}
	var err error
	for i := range jobs {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("hash working tree: %w", err)
	}
	for i, j := range jobs {
		out[j.path] = sums[i]
	}
	return out, nil
}

// hashFile fingerprints one regular file. Read errors become part of the
// fingerprint rather than failing the snapshot: an unreadable file is a
// state, and a snapshot that fails would hide every other change.
func hashFile(root string, j job, buf []byte) string {
	size := strconv.FormatInt(j.info.Size(), 10)
	// Past the cap or the budget the content hash is partial, so size and
	// mtime stand in for the unread part.
	stat := ""
	if j.n < j.info.Size() {
		stat = ":" + size + ":" + strconv.FormatInt(j.info.ModTime().UnixNano(), 10)
	}
	if j.n == 0 && j.info.Size() > 0 {
		return "stat" + stat
	}
	// O_NONBLOCK: if the file was replaced by a FIFO since Lstat, opening
	// must not hang the loop; it has no effect on regular files.
	f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(j.path)), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "unreadable:" + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, io.LimitReader(f, j.n), buf); err != nil {
		return "unreadable:" + err.Error()
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:16]) + ":" + size + stat
}
