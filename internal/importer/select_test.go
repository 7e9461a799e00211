package importer

import (
	"slices"
	"strings"
	"testing"
	"time"

	"ralph/internal/github"
)

func TestPriorityOf(t *testing.T) {
	tests := []struct {
		labels    []string
		want      Priority
		wantLabel string
	}{
		{nil, Unranked, ""},
		{[]string{"bug", "feature"}, Unranked, ""},
		{[]string{"P0"}, Critical, "P0"},
		{[]string{"p1"}, High, "p1"},
		{[]string{"P2 - medium"}, Medium, "P2 - medium"},
		{[]string{"P3"}, Low, "P3"},
		{[]string{"priority:high"}, High, "priority:high"},
		{[]string{"Priority: Critical"}, Critical, "Priority: Critical"},
		{[]string{"priority/low"}, Low, "priority/low"},
		{[]string{"prio-medium"}, Medium, "prio-medium"},
		{[]string{"high priority"}, High, "high priority"},
		{[]string{"severity:critical"}, Critical, "severity:critical"},
		{[]string{"critical"}, Critical, "critical"},
		{[]string{"urgent"}, Critical, "urgent"},
		{[]string{"critical bug"}, Critical, "critical bug"},
		{[]string{"high"}, High, "high"},
		{[]string{"low"}, Low, "low"},
		{[]string{"low-hanging fruit"}, Unranked, ""},
		{[]string{"priority"}, Unranked, ""},
		{[]string{"p10"}, Unranked, ""},
		{[]string{"priority:low", "P0"}, Critical, "P0"},
		{[]string{"P1", "priority:high"}, High, "P1"},
	}
	for _, tt := range tests {
		p, l := PriorityOf(tt.labels)
		if p != tt.want || l != tt.wantLabel {
			t.Errorf("PriorityOf(%q) = %v %q, want %v %q", tt.labels, p, l, tt.want, tt.wantLabel)
		}
	}
}

func TestSelect(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	issues := []github.Issue{
		{Number: 10, Labels: []string{"feature"}, CreatedAt: day(5)},
		{Number: 11, Labels: []string{"priority:low"}, CreatedAt: day(1)},
		{Number: 12, Labels: []string{"P1", "wontfix"}, CreatedAt: day(2)},
		{Number: 13, Labels: []string{"priority:high"}, CreatedAt: day(4)},
		{Number: 14, Labels: []string{"P1"}, CreatedAt: day(3)},
		{Number: 9, Labels: []string{"high"}, CreatedAt: day(3)},
		{Number: 15, Labels: []string{"Blocked"}, CreatedAt: day(1)},
	}
	order := func(cs []Candidate) []int {
		var out []int
		for _, c := range cs {
			out = append(out, c.Issue.Number)
		}
		return out
	}
	tests := []struct {
		name      string
		mode      string
		exclude   []string
		wantOrder []int
		wantErr   string
	}{
		{"first keeps GitHub's order", "first", nil, []int{10, 11, 12, 13, 14, 9, 15}, ""},
		{"default is first", "", nil, []int{10, 11, 12, 13, 14, 9, 15}, ""},
		{"priority, then age, then number", "priority", nil, []int{12, 9, 14, 13, 15, 10, 11}, ""},
		{"excluded labels go last, any case", "priority", []string{"WONTFIX", "blocked"}, []int{9, 14, 13, 10, 11, 12, 15}, ""},
		{"first with exclusion", "first", []string{"feature"}, []int{11, 12, 13, 14, 9, 15, 10}, ""},
		{"everything excluded", "first", []string{"feature", "priority:low", "wontfix", "priority:high", "P1", "high", "blocked"}, nil, "all 7 matching issue(s) carry an excluded label"},
		{"bad mode", "newest", nil, nil, `--select "newest": want first or priority`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, chosen, err := Select(issues, tt.mode, tt.exclude)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || chosen != -1 {
					t.Fatalf("err %v chosen %d, want %q", err, chosen, tt.wantErr)
				}
				return
			}
			if err != nil || chosen != 0 || !slices.Equal(order(cs), tt.wantOrder) {
				t.Fatalf("order %v chosen %d err %v, want %v", order(cs), chosen, err, tt.wantOrder)
			}
			for _, c := range cs {
				if (c.Excluded != "") != slices.ContainsFunc(tt.exclude, func(x string) bool {
					return slices.ContainsFunc(c.Issue.Labels, func(l string) bool { return strings.EqualFold(l, x) })
				}) {
					t.Errorf("#%d excluded=%q", c.Issue.Number, c.Excluded)
				}
			}
		})
	}
	if _, _, err := Select(nil, "first", nil); err == nil || err.Error() != "no issue matched" {
		t.Errorf("empty: %v", err)
	}
}
