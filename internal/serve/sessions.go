package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"ralph/internal/gitx"
)

var sessionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ParseSession reads NAME=DIR.
func ParseSession(s string) (Session, error) {
	name, dir, ok := strings.Cut(s, "=")
	if !ok || dir == "" {
		return Session{}, fmt.Errorf("session %q: want NAME=DIR", s)
	}
	if !sessionName.MatchString(name) {
		return Session{}, fmt.Errorf("session %q: a name is letters, digits, '.', '_' or '-' (up to 64), starting with a letter or digit", name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Session{}, err
	}
	return Session{Name: name, Dir: abs}, nil
}

// ValidSessionName says whether s may name a session (what ParseSession
// accepts), for clients that read names from people.
func ValidSessionName(s string) bool { return sessionName.MatchString(s) }

// checkRepo refuses a session directory that is not a git repository: the
// loop measures progress with git.
func checkRepo(s Session) error {
	if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("session %s: %s is not a directory", s.Name, s.Dir)
	}
	if ok, err := gitx.IsRepo(context.Background(), s.Dir); err != nil || !ok {
		return fmt.Errorf("session %s: %s is not a git repository (run `git init` there)", s.Name, s.Dir)
	}
	return nil
}

func (d *Daemon) session(name string) (Session, error) {
	all, err := d.db.Sessions()
	if err != nil {
		return Session{}, err
	}
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
	}
	return Session{}, fmt.Errorf("unknown session %q", name)
}
