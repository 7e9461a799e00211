package scaffold

import (
	"errors"
	"fmt"
)

// Kind classifies a failure so the command line can give each its own exit
// code: a CI job must tell "already done" from "refused" from "missing file"
// without parsing messages.
type Kind int

const (
	KindGeneral           Kind = iota // anything else: I/O errors, git failures
	KindBadInput                      // conflicting or invalid options
	KindNotFound                      // a file or directory the caller named does not exist
	KindMissingDependency             // a required program (git) is not installed
	KindRefused                       // the operation would overwrite something; --force allows it
)

// Error is a failure with a Kind. Msg is the whole message shown to the user.
type Error struct {
	Kind Kind
	Msg  string
	Err  error // the cause, if any
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

func errorf(kind Kind, cause error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// KindOf returns the Kind of err, KindGeneral when it carries none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindGeneral
}
