// Package httpcap holds the caps `ralph serve` puts on what its HTTP
// server accepts: how large a request body each route reads, how long a
// connection may take to send a request or sit idle, and how many
// connections it keeps (shedding the least useful one for a newcomer
// rather than refusing it). docs/security.md lists the values.
package httpcap

import (
	"errors"
	"fmt"
	"net/http"
)

// The body caps by route. GitHub sends webhook payloads of at most 25 MB;
// Slack's events and Telegram's updates are a few kilobytes; the API's
// requests and the dashboard's forms are a title or an answer.
const (
	GitHubBody  = 25 << 20
	WebhookBody = 1 << 20
	APIBody     = 1 << 20
	FormBody    = 64 << 10
	// HeaderBytes caps a request's header (net/http allows 4 KiB more).
	HeaderBytes = 64 << 10
)

// Body caps the request body h may read at limit bytes. A body that
// declares a larger length is refused with 413 before h runs, unread; one
// that does not say (chunked) is cut at the cap, and h refuses it when its
// read fails (TooLarge). The connection is closed after an over-long body
// rather than drained.
func Body(limit int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			RefuseTooLarge(w, limit)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		h.ServeHTTP(w, r)
	})
}

// TooLarge reports whether err is a read past a Body cap.
func TooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

// RefuseTooLarge answers 413, naming the cap, and closes the connection
// rather than read the rest of the body.
func RefuseTooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("request body too large: this route takes at most %s", Size(limit)), http.StatusRequestEntityTooLarge)
}

// Size is n bytes for people: 25 MiB, 64 KiB, 100 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
