package store

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// A loop rewrites its state document and three views at every iteration.
// Written the plain way — a new temporary file renamed over the old one —
// each write makes an inode and frees one, and on ext4 without a journal
// making an inode means stepping over every inode freed in the last half
// minute: the largest single part of ralph's own CPU in a loop of quick
// calls. While a run keeps spare files (Store.KeepSpares), a write swaps
// its temporary file with the old one instead (renameat2 with
// RENAME_EXCHANGE, atomic like a rename): the old file becomes the next
// write's temporary file, so no inode is made or freed.
//
// Reusing the file a reader may still hold open would let that reader see
// it rewritten; readers never see a torn file, so a spare is rewritten only
// under a write lease (F_SETLEASE), which the kernel grants only while no
// one else has the file open, and which holds off any open until the swap
// is done; nor when it has another link. A spare that fails any check is
// removed and the write makes a new temporary file as before.
type spareFiles struct {
	mu sync.Mutex
	on bool
	// names maps a file's path to its spare's name in the same directory.
	names map[string]string
	// dirs are the directories written in, kept open (spares_linux.go).
	dirs map[string]*keptDirFile
}

type keptDirFile struct {
	f    *os.File
	info os.FileInfo
}

// take hands the spare of path to one writer (none while another writes).
func (sp *spareFiles) take(path string) (name string, on bool) {
	if sp == nil {
		return "", false
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.on {
		return "", false
	}
	name = sp.names[path]
	delete(sp.names, path)
	return name, true
}

// give keeps name as path's spare, or removes it once the run is over.
func (sp *spareFiles) give(path, name string) {
	sp.mu.Lock()
	if sp.on {
		if sp.names == nil {
			sp.names = map[string]string{}
		}
		sp.names[path] = name
		sp.mu.Unlock()
		return
	}
	sp.mu.Unlock()
	removeSpare(path, name)
}

func removeSpare(path, name string) {
	if c, err := confine(path); err == nil {
		_ = c.root.Remove(filepath.Join(filepath.Dir(c.name), name))
		c.Close()
	}
}

// KeepSpares makes the state document and the views of s (and of its
// copies) swap with spare files until release, which removes the spares.
// For a run, whose one loop writes them again and again.
func (s *Store) KeepSpares() (release func()) {
	sp := s.spares
	sp.mu.Lock()
	sp.on = true
	sp.mu.Unlock()
	return func() {
		sp.mu.Lock()
		names, dirs := sp.names, sp.dirs
		sp.on, sp.names, sp.dirs = false, nil, nil
		sp.mu.Unlock()
		for _, d := range dirs {
			d.f.Close()
		}
		for path, name := range names {
			removeSpare(path, name)
		}
	}
}

// writeAtomic is writeAtomic through the store's spares.
func (s *Store) writeAtomic(path string, data []byte, perm fs.FileMode, durable bool) error {
	if s == nil {
		return writeAtomic(path, data, perm, durable)
	}
	if name, on := s.spares.take(path); on {
		if done, err := swapWrite(s.spares, path, name, data, perm, durable); done {
			return err
		}
	}
	return writeAtomic(path, data, perm, durable)
}
