// Package control carries a person's requests to a running loop: pause,
// resume and stop after the current iteration. The monitor's keys, `ralph
// pause|resume|stop` in another terminal and, later, chat commands all write
// the same small file in .ralph/; the engine reads it between iterations and
// while it waits. A file, not a signal or a socket, because it works from
// any process that can reach the project, survives a loop restart (a pause
// holds across it) and needs no daemon.
package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"ralph/internal/store"
)

// FileName is the request file inside the state directory.
const FileName = ".control"

// Request is what has been asked of the loop. The zero value asks nothing.
type Request struct {
	// Pause holds the loop before its next iteration until it is cleared.
	Pause bool `json:"pause,omitempty"`
	// Stop ends the loop after the current iteration (or at once while it
	// waits); the engine clears it when it obeys.
	Stop bool `json:"stop,omitempty"`
	// PauseBy and StopBy say who asked ("ralph stop", "monitor"), for the
	// log and the status.
	PauseBy string    `json:"pause_by,omitempty"`
	StopBy  string    `json:"stop_by,omitempty"`
	At      time.Time `json:"at,omitzero"` // of the latest request
	// ResetID asks a running loop to close its circuit breaker: the loop
	// keeps its breaker in memory, so writing the breaker's file would be
	// overwritten by its next save. The id makes the request apply once.
	ResetID  string `json:"reset_id,omitempty"`
	ResetBy  string `json:"reset_by,omitempty"`
	ResetWhy string `json:"reset_why,omitempty"`
	// ResetSession asks a running loop to start its next call in a new
	// agent session (`ralph session reset`): the session lives in the
	// loop's state, which it keeps in memory.
	ResetSession bool `json:"reset_session,omitempty"`
	// Answer answers the question the loop's call AnswerTo asked, while
	// the loop waits for it (a fleet host: loop.Policy.Answerable);
	// AnswerLoops is the loops it leaves the run (0: as they are).
	Answer      string `json:"answer,omitempty"`
	AnswerBy    string `json:"answer_by,omitempty"`
	AnswerTo    int    `json:"answer_to,omitempty"`
	AnswerLoops int    `json:"answer_loops,omitempty"`
}

// empty reports a request that asks nothing.
func (r Request) empty() bool {
	return !r.Pause && !r.Stop && r.ResetID == "" && !r.ResetSession && r.Answer == ""
}

// File is the request file of one project.
type File struct{ path string }

// Open returns the request file in the state directory ralphDir.
func Open(ralphDir string) File { return File{path: ralphDir + string(os.PathSeparator) + FileName} }

// Path is the file's location.
func (f File) Path() string { return f.path }

// Read returns the current request. A missing file asks nothing. A corrupt
// one is set aside and reported: obeying half a request could stop a loop
// nobody asked to stop, and ignoring it silently could leave one running
// that somebody did.
func (f File) Read() (Request, error) {
	var r Request
	err := store.ReadJSON(f.path, &r)
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, fs.ErrNotExist):
		return Request{}, nil
	}
	moved, rerr := store.Recover(f.path)
	if rerr == nil {
		return Request{}, fmt.Errorf("%w (set aside as %s; ask again)", err, moved)
	}
	return Request{}, err
}

// Pause asks the loop to hold before its next iteration.
func (f File) Pause(by string, now time.Time) error {
	return f.update(func(r *Request) { r.Pause, r.PauseBy, r.At = true, by, now })
}

// Resume lifts a pause; a pending stop stays.
func (f File) Resume(now time.Time) error {
	return f.update(func(r *Request) { r.Pause, r.PauseBy, r.At = false, "", now })
}

// Stop asks the loop to end after the current iteration.
func (f File) Stop(by string, now time.Time) error {
	return f.update(func(r *Request) { r.Stop, r.StopBy, r.At = true, by, now })
}

// ClearStop forgets a stop request: the engine calls it when it obeys, and
// at start, so that a stop meant for an earlier run cannot end a new one.
func (f File) ClearStop() error {
	return f.update(func(r *Request) { r.Stop, r.StopBy = false, "" })
}

// RequestReset asks the running loop to close its circuit breaker before
// its next call; id must be new for every request.
func (f File) RequestReset(id, by, why string, now time.Time) error {
	return f.update(func(r *Request) { r.ResetID, r.ResetBy, r.ResetWhy, r.At = id, by, why, now })
}

// ClearReset forgets the reset request id, once applied; a newer request
// (another id) stays.
func (f File) ClearReset(id string) error {
	return f.update(func(r *Request) {
		if r.ResetID == id {
			r.ResetID, r.ResetBy, r.ResetWhy = "", "", ""
		}
	})
}

// RequestSessionReset asks the running loop to start its next call in a
// new agent session.
func (f File) RequestSessionReset(now time.Time) error {
	return f.update(func(r *Request) { r.ResetSession, r.At = true, now })
}

// ClearSessionReset forgets the session reset request, once applied.
func (f File) ClearSessionReset() error {
	return f.update(func(r *Request) { r.ResetSession = false })
}

// update rewrites the file atomically; an empty request removes it, so a
// project at rest has no control file at all.
func (f File) update(change func(*Request)) error {
	r, err := f.Read()
	if err != nil {
		r = Request{}
	}
	change(&r)
	if r.empty() {
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("control: %w", err)
		}
		return nil
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := store.WriteFileAtomic(f.path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("control: %w", err)
	}
	return nil
}
