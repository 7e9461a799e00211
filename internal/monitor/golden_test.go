package monitor

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"ralph/internal/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenStates are the screens the golden files pin down.
var goldenStates = []struct {
	name string
	snap func() Snapshot
}{
	{"running", runningSnap},
	{"usage_wait", waitingSnap},
	{"breaker_open", breakerOpenSnap},
	{"stopped", stoppedSnap},
	{"paused", pausedSnap},
}

var goldenSizes = [][2]int{{80, 24}, {120, 40}}

func TestGoldenViews(t *testing.T) {
	for _, st := range goldenStates {
		for _, sz := range goldenSizes {
			name := fmt.Sprintf("%s_%dx%d", st.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				m := newTestModel(sz[0], sz[1])
				feedSnap(m, st.snap(), liveSample()...)
				got := m.View()
				checkFits(t, got, sz[0], sz[1])
				golden(t, name, got)
			})
		}
	}
}

func TestGoldenOverlays(t *testing.T) {
	for _, sz := range goldenSizes {
		m := newTestModel(sz[0], sz[1])
		feedSnap(m, runningSnap(), liveSample()...)
		press(m, "?")
		got := m.View()
		checkFits(t, got, sz[0], sz[1])
		golden(t, fmt.Sprintf("help_%dx%d", sz[0], sz[1]), got)

		press(m, "esc")
		press(m, "l")
		got = m.View()
		checkFits(t, got, sz[0], sz[1])
		golden(t, fmt.Sprintf("log_%dx%d", sz[0], sz[1]), got)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// checkFits is the layout's promise: nothing wider or taller than the
// window, whatever is in the panels.
func checkFits(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Errorf("%dx%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("%dx%d: line %d is %d cells wide: %q", w, h, i+1, n, l)
		}
	}
}

// TestViewsFitEverySize resizes through small, odd and large windows in
// every mode, with colour on so escape codes are part of the measure.
func TestViewsFitEverySize(t *testing.T) {
	long := runningSnap()
	long.Loop.Status.LastAction = strings.Repeat("very long action ", 20)
	long.Breaker.State.Message = strings.Repeat("why it opened ", 30)
	long.Log = append(long.Log, strings.Repeat("x", 500), "tab\there and \x1b[31mansi\x1b[0m and 漢字漢字漢字")
	live := append(liveSample(), agent.LiveEvent{Kind: agent.LiveText, Text: strings.Repeat("漢字 wide words ", 40)})
	snaps := []Snapshot{runningSnap(), waitingSnap(), breakerOpenSnap(), stoppedSnap(), pausedSnap(), long, {}}
	for _, w := range []int{1, 2, 10, 29, 30, 40, 59, 60, 79, 80, 99, 100, 101, 150, 250} {
		for _, h := range []int{1, 2, 5, 10, 17, 23, 24, 25, 40, 80} {
			for si, s := range snaps {
				for _, keys := range []string{"", "?", "l"} {
					m := newTestModel(w, h)
					m.st = newStyles(colourRenderer())
					feedSnap(m, s, live...)
					if keys != "" {
						press(m, keys)
					}
					v := m.View()
					lines := strings.Split(v, "\n")
					if len(lines) > h {
						t.Fatalf("snapshot %d keys %q at %dx%d: %d lines", si, keys, w, h, len(lines))
					}
					for i, l := range lines {
						if n := ansi.StringWidth(l); n > w {
							t.Fatalf("snapshot %d keys %q at %dx%d: line %d is %d wide: %q", si, keys, w, h, i+1, n, l)
						}
					}
				}
			}
		}
	}
}

func TestNoColourMeansNoEscapes(t *testing.T) {
	m := newTestModel(120, 40)
	feedSnap(m, breakerOpenSnap(), liveSample()...)
	if v := m.View(); strings.Contains(v, "\x1b") {
		t.Fatalf("escape codes in a NoColor view:\n%q", v)
	}
	m.st = newStyles(colourRenderer())
	if v := m.View(); !strings.Contains(v, "\x1b[") {
		t.Fatal("no colour with an ANSI profile")
	}
	// A renderer on something that is not a terminal detects no colour.
	plain := NewModel(Options{Out: &strings.Builder{}, Now: fixedNow})
	plain.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	feedSnap(plain, breakerOpenSnap())
	if v := plain.View(); strings.Contains(v, "\x1b") {
		t.Fatal("escape codes on a non-terminal output")
	}
}

func colourRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(&strings.Builder{})
	r.SetColorProfile(termenv.ANSI)
	return r
}
