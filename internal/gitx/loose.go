package gitx

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
)

// errNotLoose says a blob is not a loose object (it is packed, in an
// alternate store, or missing): only git can read it.
var errNotLoose = errors.New("not a loose object")

// errTooBig says a blob or file is past what is read in-process.
var errTooBig = errors.New("too big to read in-process")

// Empty blobs need no object: git knows them without one.
const (
	emptyBlobSHA1   = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
	emptyBlobSHA256 = "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"
)

// readLooseBlob reads the blob named oid from the loose objects of the
// repository whose common git directory is gitDir, confined to it (no
// link out of it is followed, the object file itself may be no link),
// and checks the object's header and name. At most limit bytes of
// content are read; a larger blob is errTooBig.
func readLooseBlob(gitDir *os.Root, oid string, limit int64) ([]byte, error) {
	if len(oid) != 40 && len(oid) != 64 || !isLowerHex(oid) {
		return nil, fmt.Errorf("object name %q: not an object name", oid)
	}
	if oid == emptyBlobSHA1 || oid == emptyBlobSHA256 {
		return nil, nil
	}
	name := "objects/" + oid[:2] + "/" + oid[2:]
	fi, err := gitDir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errNotLoose
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	f, err := gitDir.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, fmt.Errorf("%s: replaced while read", name)
	}
	z, err := zlib.NewReader(io.LimitReader(f, limit+1<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer z.Close()
	// The header is "blob <size>\0"; a size has at most 20 digits.
	head := make([]byte, 0, 32)
	var one [1]byte
	for {
		if _, err := io.ReadFull(z, one[:]); err != nil {
			return nil, fmt.Errorf("%s: header: %w", name, err)
		}
		if one[0] == 0 {
			break
		}
		if len(head) == cap(head) {
			return nil, fmt.Errorf("%s: header too long", name)
		}
		head = append(head, one[0])
	}
	size, ok := bytes.CutPrefix(head, []byte("blob "))
	if !ok {
		return nil, fmt.Errorf("%s: not a blob", name)
	}
	n, err := strconv.ParseInt(string(size), 10, 64)
	if err != nil || n < 0 || string(size) != strconv.FormatInt(n, 10) {
		return nil, fmt.Errorf("%s: bad size %q", name, size)
	}
	if n > limit {
		return nil, errTooBig
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(z, body); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Read to the end, so that zlib checks its checksum and nothing
	// trails the content.
	if k, err := z.Read(one[:]); k != 0 || err != io.EOF {
		return nil, fmt.Errorf("%s: more than its size", name)
	}
	if blobName(body, len(oid)/2) != oid {
		return nil, fmt.Errorf("%s: content does not match its name", name)
	}
	return body, nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
