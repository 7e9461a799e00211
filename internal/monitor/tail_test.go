package monitor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent"
	"ralph/internal/store"
)

// toolParser stands in for an agent's parser: {"tool": "X", "target": "Y"}
// lines become tool events, anything else text; it counts its lines to show
// that a new log gets a new parser.
func toolParser(dir string, emit func(agent.LiveEvent)) func([]byte) {
	n := 0
	return func(line []byte) {
		n++
		var v struct{ Tool, Target string }
		if json.Unmarshal(line, &v) == nil && v.Tool != "" {
			emit(agent.LiveEvent{Kind: agent.LiveTool, Tool: v.Tool, Target: v.Target})
			return
		}
		emit(agent.LiveEvent{Kind: agent.LiveText, Text: dir + ":" + string(line) + ":" + strings.Repeat("+", n)})
	}
}

func texts(evs []agent.LiveEvent) string {
	var s []string
	for _, e := range evs {
		if e.Kind == agent.LiveTool {
			s = append(s, "⚡"+e.Tool+" "+e.Target)
		} else {
			s = append(s, e.Text)
		}
	}
	return strings.Join(s, "|")
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestFollower(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	appendTo(t, a, "one\n{\"tool\":\"Read\",\"target\":\"x.go\"}\n\ntw")
	f := newFollower(toolParser, "/p")

	evs, reset := f.poll(a)
	if !reset || texts(evs) != "/p:one:+|⚡Read x.go|/p::+++" {
		t.Fatalf("start: reset %v, %q", reset, texts(evs))
	}
	appendTo(t, a, "o\nthree\n")
	if evs, reset = f.poll(a); reset || texts(evs) != "/p:two:++++|/p:three:+++++" {
		t.Fatalf("append: reset %v, %q", reset, texts(evs))
	}
	if evs, _ = f.poll(a); len(evs) != 0 {
		t.Fatalf("nothing new, yet %q", texts(evs))
	}

	// A new iteration's log: a fresh parser from its start.
	appendTo(t, b, "first\n")
	if evs, reset = f.poll(b); !reset || texts(evs) != "/p:first:+" {
		t.Fatalf("new log: reset %v, %q", reset, texts(evs))
	}
	// The iteration ends: what it wrote last is still read, then nothing.
	appendTo(t, b, "last\n")
	if evs, reset = f.poll(""); reset || texts(evs) != "/p:last:++" {
		t.Fatalf("end: reset %v, %q", reset, texts(evs))
	}
	appendTo(t, b, "after\n")
	if evs, _ = f.poll(""); len(evs) != 0 {
		t.Fatalf("followed after the end: %q", texts(evs))
	}

	// Truncated (or replaced by a shorter file): read from the start again.
	f.poll(a)
	if err := os.WriteFile(a, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if evs, _ = f.poll(a); !strings.Contains(texts(evs), "/p:new:") {
		t.Fatalf("truncated: %q", texts(evs))
	}
}

func TestFollowerRawAndBounds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.log")
	// Attaching to a long log starts near its end, on a whole line.
	var b strings.Builder
	for b.Len() < 2*followWindow {
		b.WriteString("filler line that is long enough to matter\n")
	}
	b.WriteString("  recent  \n\n")
	appendTo(t, path, b.String())
	f := newFollower(nil, "")
	evs, _ := f.poll(path)
	if n := len(evs); n == 0 || n > followWindow/40 || evs[n-1].Text != "recent" || evs[n-1].Kind != agent.LiveOutput {
		t.Fatalf("%d events, last %+v", n, evs[len(evs)-1])
	}
	for _, e := range evs {
		if e.Text != "filler line that is long enough to matter" && e.Text != "recent" {
			t.Fatalf("cut line %q", e.Text)
		}
	}
	// A line longer than any event may be is skipped, not held.
	appendTo(t, path, strings.Repeat("x", maxFollowLine+10)+"\nafter\n")
	evs, _ = f.poll(path)
	if texts(evs) != "after" {
		t.Fatalf("after a huge line: %q", texts(evs))
	}
	appendTo(t, path, strings.Repeat("y", maxFollowRead/2))
	f.poll(path)
	appendTo(t, path, strings.Repeat("y", maxFollowLine)+"\nok\n")
	if evs, _ = f.poll(path); texts(evs) != "ok" || len(f.partial) != 0 {
		t.Fatalf("after a huge partial line: %q, %d held", texts(evs), len(f.partial))
	}
}

// TestAttachedRefresh is the attach mode end to end: a load finds the
// running iteration's log and the follower reads it into the activity.
func TestAttachedRefresh(t *testing.T) {
	p := newProject(t)
	p.populate()
	out, _ := p.st.IterationLogs(13, t0.Add(-time.Minute))
	appendTo(t, out, `{"tool":"Bash","target":"go test ./..."}`+"\n")
	src := p.source()
	m := NewModel(Options{Source: src, Parser: toolParser, NoColor: true, Now: fixedNow})
	m.Update(m.refresh()())
	if got := texts(m.act.events); got != p.st.ProjectDir()+":output of 13:+|⚡Bash go test ./..." {
		t.Fatalf("activity %q", got)
	}
	if v := m.View(); !strings.Contains(v, "⚡ Bash go test ./...") || !strings.Contains(v, "Iteration 13") {
		t.Fatalf("view:\n%s", v)
	}
	// The loop stops: the activity stays as the last iteration's.
	p.status(store.Status{Status: "stopped", ExitReason: "plan_complete", StartedAt: t0.Add(-time.Hour), LoopCount: 13})
	m.Update(m.refresh()())
	if len(m.act.events) != 2 || !strings.Contains(m.View(), "Last iteration") {
		t.Fatalf("after the stop: %q", texts(m.act.events))
	}
}
