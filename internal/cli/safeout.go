package cli

import (
	"io"

	"ralph/internal/redact"
	"ralph/internal/termsafe"
)

// Text that may come from an agent (its summary, a refused command, a
// question) or from a repository (a committed status.json) is shown only
// after its secrets are masked and its terminal escape sequences removed.

// safeText is s as a printer may show it.
func safeText(s string) string { return termsafe.String(redact.String(s)) }

// safeWriter masks secrets and strips escape sequences from what goes
// through it, a line at a time; the returned flush passes on a last line
// without its newline.
func safeWriter(w io.Writer) (io.Writer, func()) {
	r := redact.NewWriter(termsafe.Writer{W: w})
	return r, func() { _ = r.Flush() }
}

// redactedWriter masks secrets only, for output that carries ralph's own
// colours (doctor) or is JSON, where escapes are already encoded.
func redactedWriter(w io.Writer) (io.Writer, func()) {
	r := redact.NewWriter(w)
	return r, func() { _ = r.Flush() }
}

// jsonLines masks secrets in JSON written a line at a time (ralph run
// --json); whole lines pass at once, so nothing is held back.
func jsonLines(w io.Writer) io.Writer { return redact.NewWriter(w) }
