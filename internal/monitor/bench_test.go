package monitor

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// BenchmarkIdleRefresh is one second of an idle dashboard: the tick's load
// finds no file changed, and the screen is drawn again.
func BenchmarkIdleRefresh(b *testing.B) {
	for _, sz := range goldenSizes {
		b.Run(sizeName(sz), func(b *testing.B) {
			p := newProject(b)
			p.populate()
			m := NewModel(Options{Source: p.source(), NoColor: true, Now: fixedNow})
			m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			m.Update(m.refresh()())
			m.act.add(liveSample()...)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				now := t0.Add(time.Duration(i) * time.Second)
				m.Update(tickMsg(now))
				m.Update(snapshotMsg{snap: m.loader.Load(now)})
				_ = m.View()
			}
		})
	}
}

// BenchmarkColdLoad reads every file, as the first load and a new run do.
func BenchmarkColdLoad(b *testing.B) {
	p := newProject(b)
	p.populate()
	src := p.source()
	b.ReportAllocs()
	for b.Loop() {
		Load(src, t0)
	}
}

func sizeName(sz [2]int) string {
	return map[int]string{80: "80x24", 120: "120x40"}[sz[0]]
}
