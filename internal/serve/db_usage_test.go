package serve

import (
	"reflect"
	"testing"
	"time"

	"ralph/internal/analyze"
	"ralph/internal/loop"
)

// The windows a call's agent reported are kept under the account the call
// ran under: a later word wins, a figure not said keeps the one known, an
// older record saved late changes nothing, and all of it outlives a
// restart.
func TestWindowUsageKept(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	for _, s := range []string{"api", "web"} {
		if err := db.PutSession(Session{Name: s, Dir: "/src/" + s}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutSessionAccount("api", "claude", "work"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	r5, r7 := t0.Add(3*time.Hour), t0.Add(5*24*time.Hour)
	save := func(session string, n int, end time.Time, ws ...analyze.Window) {
		t.Helper()
		rec := &loop.Metrics{Loop: n, Agent: "claude", StartedAt: end.Add(-time.Second), DurationMS: 1000, Windows: ws}
		if err := db.SaveState(session, "t-"+session, loop.State{Loop: n}, rec); err != nil {
			t.Fatal(err)
		}
	}
	save("api", 1, t0, analyze.Window{Kind: "five_hour", Used: 0.2, ResetsAt: r5}, analyze.Window{Kind: "seven_day", Used: 0.5, ResetsAt: r7})
	save("api", 2, t0.Add(time.Hour), analyze.Window{Kind: "five_hour", Used: 0.6, ResetsAt: r5})
	save("api", 3, t0.Add(2*time.Hour), analyze.Window{Kind: "seven_day", Used: -1})                   // said nothing of it
	save("api", 4, t0.Add(30*time.Minute), analyze.Window{Kind: "five_hour", Used: 0.3, ResetsAt: r5}) // older, saved late
	save("web", 1, t0, analyze.Window{Kind: "five_hour", Used: 1, ResetsAt: r5})                       // its agent's own login
	want := map[string][]WindowUse{
		"work":   {{"five_hour", 0.6, r5, t0.Add(time.Hour)}, {"seven_day", 0.5, r7, t0.Add(2 * time.Hour)}},
		"claude": {{"five_hour", 1, r5, t0}},
	}
	check := func(db *DB) {
		t.Helper()
		got, err := db.WindowUsage()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("windows\n got %+v\nwant %+v", got, want)
		}
	}
	check(db)
	db.Close()
	check(openTestDB(t, dir))
}

func TestWindowFigures(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		w    WindowUse
		used float64 // -1: absent
		text string
	}{
		{"used, resets later", WindowUse{Kind: "five_hour", Used: 0.42, ResetsAt: now.Add(2 * time.Hour)}, 0.42, "five_hour 42% used, resets Nov 27 15:00 CET"},
		{"used up", WindowUse{Kind: "five_hour", Used: 1, ResetsAt: now.Add(time.Minute)}, 1, "five_hour 100% used, resets Nov 27 13:01 CET"},
		{"reset passed: a new window", WindowUse{Kind: "seven_day", Used: 0.9, ResetsAt: now}, 0, "seven_day 0% used"},
		{"never said how much", WindowUse{Kind: "seven_day", Used: -1, ResetsAt: now.Add(48 * time.Hour)}, -1, "seven_day, resets Nov 29 13:00 CET"},
		{"nothing but its kind", WindowUse{Kind: "five_hour", Used: -1}, -1, "five_hour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := windowFigures([]WindowUse{tt.w}, now, berlin)[0]
			if (f.Used == nil) != (tt.used < 0) || f.Used != nil && *f.Used != tt.used || f.Text != tt.text {
				used := "absent"
				if f.Used != nil {
					used = time.Duration(*f.Used * 100).String()
				}
				t.Errorf("got used %s, %q; want %v, %q", used, f.Text, tt.used, tt.text)
			}
		})
	}
}
