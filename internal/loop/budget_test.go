package loop

import "testing"

func TestBudget(t *testing.T) {
	tests := []struct {
		name          string
		b             Budget
		n             int
		used, left    int
		grant, topped int // MaxLoops after Grant(n, 10) and Topped(n, 10)
	}{
		{"a fresh task", Budget{MaxLoops: 5}, 0, 0, 5, 10, 5},
		{"a task midway", Budget{MaxLoops: 5}, 3, 3, 2, 13, 5},
		{"a spent task", Budget{MaxLoops: 5}, 5, 5, 0, 15, 15},
		{"a task counted from an old session's loops", Budget{MaxLoops: 5, FirstLoop: 17}, 19, 2, 3, 12, 5},
		{"overspent (a watchdog record beyond the budget)", Budget{MaxLoops: 2, FirstLoop: 4}, 7, 3, -1, 13, 13},
		{"a count from before the task never goes negative", Budget{MaxLoops: 3, FirstLoop: 9}, 4, 0, 3, 10, 3},
		{"no budget yet", Budget{}, 0, 0, 0, 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.b.Used(tt.n); got != tt.used {
				t.Errorf("Used(%d) = %d, want %d", tt.n, got, tt.used)
			}
			if got := tt.b.Left(tt.n); got != tt.left {
				t.Errorf("Left(%d) = %d, want %d", tt.n, got, tt.left)
			}
			if got := tt.b.Grant(tt.n, 10); got.MaxLoops != tt.grant || got.FirstLoop != tt.b.FirstLoop || got.Left(tt.n) != 10 {
				t.Errorf("Grant(%d, 10) = %+v, want max %d and 10 left", tt.n, got, tt.grant)
			}
			if got := tt.b.Topped(tt.n, 10); got.MaxLoops != tt.topped || got.FirstLoop != tt.b.FirstLoop {
				t.Errorf("Topped(%d, 10) = %+v, want max %d", tt.n, got, tt.topped)
			}
		})
	}
}
