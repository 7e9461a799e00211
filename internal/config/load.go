package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxRalphrcSize bounds what ReadRalphrc reads: a real .ralphrc is a few
// kilobytes, and a repository should not be able to make start-up slow.
const maxRalphrcSize = 1 << 20

// ReadRalphrc reads and parses the .ralphrc at path, resolving references
// through lookup (see ParseRalphrcEnv). A missing file is an empty layer, not
// an error: most projects have none.
func ReadRalphrc(path string, lookup func(string) (string, bool)) (Layer, []Warning, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Layer{}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRalphrcSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxRalphrcSize {
		return nil, nil, fmt.Errorf("%s: larger than %d bytes; not a .ralphrc", path, maxRalphrcSize)
	}
	values, warns, err := ParseRalphrcEnv(path, data, lookup)
	return Layer(values), warns, err
}
