package suggest

import "testing"

func TestClosest(t *testing.T) {
	cmds := []string{"run", "status", "stats", "setup", "monitor", "max-loops", "max-runtime", "max-cost"}
	tests := []struct{ in, want string }{
		{"rnu", ""},         // short: exact only
		{"statsu", "stats"}, // one edit from stats, two from status
		{"moniter", "monitor"},
		{"max-loop", "max-loops"},
		{"max-runtim", "max-runtime"},
		{"maxloops", "max-loops"},
		{"delete", ""},
		{"run", "run"},
	}
	for _, tt := range tests {
		if got := Closest(tt.in, cmds); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"abc", "abc", 0}, {"ab", "ba", 2}} {
		if d := Distance(tt.a, tt.b); d != tt.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
}
