package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
)

// Print writes the report as a table, one decision a line, each
// difference marked with what differs and what today's rules said; then a
// summary line.
func Print(w io.Writer, rep Report) error {
	file, where, head := oneFile(rep.Rows), func(r Row) string { return r.Where }, "WHERE"
	if file != "" {
		fmt.Fprintf(w, "%s\n", clean(strings.TrimSuffix(file, ":")))
		where, head = func(r Row) string { return strings.TrimPrefix(r.Where, file) }, "LINE"
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tLOOP\tSTEP\tRECORDED\tTODAY\t\n", head)
	for _, r := range rep.Rows {
		r.Where = where(r)
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t%d\t-\t%s\t\t\n", clean(r.Where), r.Loop, clean(r.Skipped))
			continue
		}
		mark := ""
		if d := r.Diff(); d != "" {
			mark = "≠ " + d
			if r.Message != "" {
				mark += ": " + clean(shorten(r.Message, 160))
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", clean(r.Where), r.Loop, r.Step, clean(r.Recorded), clean(r.Today), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, Summary(rep))
	return err
}

// Summary is the report in one line.
func Summary(rep Report) string {
	s := fmt.Sprintf("%s replayed, %d differ", plural(rep.Replayed, "decision"), rep.Differ)
	if rep.Skipped > 0 {
		s += fmt.Sprintf("; %s not replayable", plural(rep.Skipped, "record"))
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// clean keeps a recorded string on its line and off the terminal's
// controls: records quote agents.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}

// oneFile is the "file:" every row's place starts with, when they all
// come from one file: it is said once, and the rows name their lines.
func oneFile(rows []Row) string {
	file := ""
	for i, r := range rows {
		cut := strings.LastIndexByte(r.Where, ':')
		if cut < 0 {
			return ""
		}
		if i == 0 {
			file = r.Where[:cut+1]
		} else if r.Where[:cut+1] != file {
			return ""
		}
	}
	return file
}
