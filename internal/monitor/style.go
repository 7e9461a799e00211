package monitor

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// paint is a style reduced to the escape codes around its text. The
// dashboard styles only single lines, and lipgloss measures every line it
// renders for alignment it is not asked to do: redrawn every second, that
// measuring was most of the dashboard's cost.
type paint struct{ pre, post string }

// Render styles one line.
func (p paint) Render(s string) string {
	if s == "" || p.pre == "" {
		return s
	}
	return p.pre + s + p.post
}

// newPaint renders a probe and keeps what surrounds it; with no colour
// profile both sides are empty and Render is the identity.
func newPaint(s lipgloss.Style) paint {
	const probe = "x"
	out := s.Render(probe)
	i := strings.Index(out, probe)
	if i < 0 {
		return paint{}
	}
	return paint{pre: out[:i], post: out[i+len(probe):]}
}

// styles are the dashboard's few looks. Only the sixteen basic colours are
// used: they follow the user's terminal theme, and adaptive colours would
// make lipgloss query the terminal's background while bubbletea reads keys.
type styles struct {
	title, dim, key, ok, warn, bad, accent, bar, barEmpty paint
}

func newStyles(r *lipgloss.Renderer) styles {
	s := func() lipgloss.Style { return r.NewStyle() }
	return styles{
		title:    newPaint(s().Bold(true)),
		dim:      newPaint(s().Faint(true)),
		key:      newPaint(s().Bold(true).Foreground(lipgloss.Color("6"))),
		ok:       newPaint(s().Foreground(lipgloss.Color("2"))),
		warn:     newPaint(s().Foreground(lipgloss.Color("3"))),
		bad:      newPaint(s().Bold(true).Foreground(lipgloss.Color("1"))),
		accent:   newPaint(s().Foreground(lipgloss.Color("6"))),
		bar:      newPaint(s().Foreground(lipgloss.Color("4"))),
		barEmpty: newPaint(s().Faint(true)),
	}
}
