package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Style is how WriteText marks a status.
type Style struct {
	// Fancy uses ✓ ! ✗ in colour. Without it the marks are the plain words
	// ok, warn and FAIL, which survive logs, CI consoles and grep; the
	// command line picks Fancy only for a terminal without NO_COLOR.
	Fancy bool
}

const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
)

func (s Style) mark(st Status) string {
	if !s.Fancy {
		switch st {
		case OK:
			return "ok  "
		case Warn:
			return "warn"
		}
		return "FAIL"
	}
	switch st {
	case OK:
		return ansiGreen + "✓" + ansiReset
	case Warn:
		return ansiYellow + "!" + ansiReset
	}
	return ansiRed + "✗" + ansiReset
}

// WriteText prints one line per check, names aligned, then a summary line.
func WriteText(w io.Writer, r Report, s Style) error {
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%s %-*s  %s\n", s.mark(c.Status), width, c.Name, c.Detail)
	}
	b.WriteString(Summary(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the report's last line.
func Summary(r Report) string {
	fails, warns := r.Count(Fail), r.Count(Warn)
	switch {
	case fails > 0 && warns > 0:
		return fmt.Sprintf("not ready: %s blocking a run, %s", plural(fails, "problem"), plural(warns, "warning"))
	case fails > 0:
		return fmt.Sprintf("not ready: %s blocking a run", plural(fails, "problem"))
	case warns > 0:
		return fmt.Sprintf("ready, with %s", plural(warns, "warning"))
	}
	return "ready"
}

// WriteJSON prints the report as one indented JSON object.
func WriteJSON(w io.Writer, r Report) error {
	if r.Checks == nil {
		r.Checks = []Check{} // [] rather than null for consumers
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
