package suggest

import "testing"

func TestClosest(t *testing.T) {
	cmds := []string{"run", "status", "stats", "setup", "monitor", "max-loops", "max-runtime", "max-cost", "task", "serve", "rm"}
	tests := []struct{ in, want string }{
		{"rnu", "run"}, // short: exact or one swap only
		{"rum", ""},    // a new letter in a short name could be anything
		{"ru", ""},
		{"tsak", "task"},
		{"sevre", "serve"},
		{"stauts", "status"}, // a swap, not the shorter stats
		{"statsu", "status"}, // one swap from status, one deletion from stats: the swap wins
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
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"abc", "abc", 0}, {"ab", "ba", 1}, {"abc", "bca", 2}, {"Run", "run", 0}} {
		if d := Distance(tt.a, tt.b); d != tt.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
}
