package gitx

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The index, read in-process for the status that needs no git process
// (quickstatus.go). Only what that status models is accepted: stage-0
// entries of files, links and their stat data. Anything else (conflicts,
// submodules, sparse or split indexes, entries git is told not to look
// at) is errIndexNotPlain, and git is asked as before.

// errIndexNotPlain says the index holds something only git should judge.
var errIndexNotPlain = errors.New("index: more than plain entries")

// indexEntry is one entry of the index.
type indexEntry struct {
	path string
	mode uint32
	oid  string
	// The stat data git cached when it last looked at the file, as it
	// stores them: 32 bits each.
	ctimeS, ctimeNS, mtimeS, mtimeNS uint32
	dev, ino, uid, gid, size         uint32
}

// Entry modes the quick status models; a gitlink (160000) is not one.
const (
	modeFile    = 0o100644
	modeExec    = 0o100755
	modeSymlink = 0o120000
)

// parseIndex reads an index file whose object names are hashLen bytes
// (20 for SHA-1, 32 for SHA-256), checking its checksum.
func parseIndex(b []byte, hashLen int) ([]indexEntry, error) {
	if hashLen != sha1.Size && hashLen != sha256.Size {
		return nil, fmt.Errorf("index: object names of %d bytes", hashLen)
	}
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return nil, errors.New("index: not an index file")
	}
	body, sum := b[:len(b)-hashLen], b[len(b)-hashLen:]
	var got []byte
	if hashLen == sha1.Size {
		s := sha1.Sum(body)
		got = s[:]
	} else {
		s := sha256.Sum256(body)
		got = s[:]
	}
	if !bytes.Equal(got, sum) {
		return nil, errors.New("index: checksum does not match")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index: version %d", version)
	}
	n := binary.BigEndian.Uint32(b[8:12])
	if uint64(n) > uint64(len(body))/uint64(40+hashLen+2) {
		return nil, fmt.Errorf("index: %d entries in %d bytes", n, len(body))
	}
	entries := make([]indexEntry, 0, n)
	off := 12
	prev := ""
	fixed := 40 + hashLen + 2
	for i := uint32(0); i < n; i++ {
		if off+fixed > len(body) {
			return nil, fmt.Errorf("index: entry %d: truncated", i)
		}
		e := body[off:]
		u := func(k int) uint32 { return binary.BigEndian.Uint32(e[4*k:]) }
		ent := indexEntry{ctimeS: u(0), ctimeNS: u(1), mtimeS: u(2), mtimeNS: u(3), dev: u(4), ino: u(5),
			mode: u(6), uid: u(7), gid: u(8), size: u(9), oid: hex.EncodeToString(e[40 : 40+hashLen])}
		flags := binary.BigEndian.Uint16(e[40+hashLen:])
		head := fixed
		if flags&0x4000 != 0 {
			// Extended flags (skip-worktree, intent-to-add): version 3 on.
			if version < 3 {
				return nil, fmt.Errorf("index: entry %d: extended flags in version %d", i, version)
			}
			return nil, errIndexNotPlain
		}
		if flags&0x8000 != 0 || flags&0x3000 != 0 {
			// Assume-valid, or a conflict's stage.
			return nil, errIndexNotPlain
		}
		switch ent.mode {
		case modeFile, modeExec, modeSymlink:
		case 0o160000:
			return nil, errIndexNotPlain
		default:
			return nil, fmt.Errorf("index: entry %d: mode %o", i, ent.mode)
		}
		nameLen := int(flags & 0xfff)
		var name string
		if version == 4 {
			strip, k, ok := indexVarint(body[off+head:])
			if !ok || strip > uint64(len(prev)) {
				return nil, fmt.Errorf("index: entry %d: bad path prefix", i)
			}
			start := off + head + k
			end := bytes.IndexByte(body[start:], 0)
			if end < 0 {
				return nil, fmt.Errorf("index: entry %d: unterminated path", i)
			}
			name = prev[:len(prev)-int(strip)] + string(body[start:start+end])
			off = start + end + 1
		} else {
			start := off + head
			end := bytes.IndexByte(body[start:], 0)
			if end < 0 || nameLen < 0xfff && end != nameLen {
				return nil, fmt.Errorf("index: entry %d: bad path length", i)
			}
			name = string(body[start : start+end])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			size := (head + end + 8) &^ 7
			if off+size > len(body) {
				return nil, fmt.Errorf("index: entry %d: truncated", i)
			}
			for _, c := range body[start+end : off+size] {
				if c != 0 {
					return nil, fmt.Errorf("index: entry %d: bad padding", i)
				}
			}
			off += size
		}
		if nameLen < 0xfff && len(name) != nameLen || !cleanIndexPath(name) {
			return nil, fmt.Errorf("index: entry %d: bad path %q", i, name)
		}
		if i > 0 && name <= prev {
			return nil, fmt.Errorf("index: entry %d: %q out of order", i, name)
		}
		ent.path, prev = name, name
		entries = append(entries, ent)
	}
	// Extensions: optional ones (an upper-case first letter: the cached
	// trees, the untracked cache, resolve-undo…) are skipped; a required
	// one (a split or sparse index) says the entries are not the whole.
	for off < len(body) {
		if off+8 > len(body) {
			return nil, errors.New("index: truncated extension")
		}
		sig, size := body[off:off+4], binary.BigEndian.Uint32(body[off+4:])
		if uint64(size) > uint64(len(body)-off-8) {
			return nil, fmt.Errorf("index: extension %q: truncated", sig)
		}
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, errIndexNotPlain
		}
		off += 8 + int(size)
	}
	return entries, nil
}

// indexVarint is git's offset encoding (varint.c): each continuation
// adds one before shifting, so every value has one encoding.
func indexVarint(b []byte) (v uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	c := b[0]
	v = uint64(c & 0x7f)
	n = 1
	for c&0x80 != 0 {
		if n >= len(b) || v > 1<<50 {
			return 0, 0, false
		}
		c = b[n]
		n++
		v = (v+1)<<7 | uint64(c&0x7f)
	}
	return v, n, true
}

// cleanIndexPath is a path git would have put in an index: relative, no
// empty, "." or ".." component, nothing named .git.
func cleanIndexPath(p string) bool {
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' {
		return false
	}
	for c := range strings.SplitSeq(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}
