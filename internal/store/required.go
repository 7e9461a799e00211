package store

import "errors"

// Required is a file a loop cannot run without, with its size cap.
type Required struct {
	Path  string
	Limit int64
}

// MissingOf is RequiredFiles for a loop whose prompt and plan live outside
// its project (a daemon's task, a Temporal worker's call): the files that
// are gone, by path, and an error for a file ralph refuses to read (a
// link, one over its cap).
func MissingOf(files ...Required) (missing []string, err error) {
	for _, f := range files {
		switch cerr := CheckIn("", f.Path, f.Limit); {
		case cerr == nil:
		case IsReadRefusal(cerr):
			err = errors.Join(err, cerr)
		default:
			missing = append(missing, f.Path)
		}
	}
	return missing, err
}
