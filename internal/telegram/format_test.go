package telegram

import (
	"errors"
	"strings"
	"testing"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"short", "one\ntwo", 10, []string{"one\ntwo"}},
		{"exactly the limit", "abcd\nefgh", 9, []string{"abcd\nefgh"}},
		{"lines packed, cut between them", "aa\nbb\ncc\ndd", 6, []string{"aa\nbb", "cc\ndd"}},
		{"a long line cut at a space", "the quick brown fox", 10, []string{"the quick", "brown fox"}},
		{"a long line without spaces cut at the limit", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"emoji count twice", "😀😀😀", 4, []string{"😀😀", "😀"}},
		{"accents count once", "ééééé", 5, []string{"ééééé"}},
		{"blank lines dropped at cuts, no empty part", "a\n\n\n\nb", 2, []string{"a", "b"}},
		{"empty", "", 10, nil},
		{"only spaces", "   \n  ", 10, nil},
	}
	for _, c := range cases {
		got := Split(c.text, c.limit)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("%s: Split(%q, %d) = %q, want %q", c.name, c.text, c.limit, got, c.want)
		}
	}
}

// A long status fits Telegram, and nothing but the spaces at the cuts is
// lost.
func FuzzSplit(f *testing.F) {
	f.Add(strings.Repeat("line of words 😀\n", 20), 30)
	f.Add("x", 1)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < 2 || limit > 5000 {
			return
		}
		parts := Split(text, limit)
		for _, p := range parts {
			if units(p) > limit || strings.TrimSpace(p) == "" {
				t.Fatalf("part %q (limit %d)", p, limit)
			}
		}
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if squash(strings.Join(parts, "")) != squash(text) {
			t.Fatalf("content changed: %q → %q", text, parts)
		}
	})
}

var now = time.Date(2026, 11, 20, 19, 0, 0, 0, time.UTC)

func TestTaskText(t *testing.T) {
	base := serve.TaskView{ID: "t3", Session: "5", Title: "Build auth", State: fleet.Running, LoopCount: 4, MaxLoops: 50,
		CircuitBreaker: serve.BreakerView{State: "CLOSED"}, CostUSD: 1.234, Summary: "Added the login endpoint."}
	cases := []struct {
		name string
		edit func(*serve.TaskView)
		want []string
		not  []string
	}{
		{"running", func(*serve.TaskView) {},
			[]string{"▶️ 5 · t3 running · loop 4/50", "Build auth", "breaker CLOSED · $1.23", "last: Added the login endpoint."}, []string{"next:", "why:"}},
		{"waiting on a usage limit", func(v *serve.TaskView) {
			v.Activity, v.WaitUntil = "waiting: usage_limit", now.Add(2*time.Hour+10*time.Minute)
		}, []string{"now: waiting: usage_limit until 2026-11-20 21:10 UTC (in 2h 10m)"}, nil},
		{"halted", func(v *serve.TaskView) {
			v.State, v.ExitReason, v.Message = fleet.Halted, "circuit_breaker_open", "no progress in 3 loops"
			v.CircuitBreaker = serve.BreakerView{State: "OPEN", TotalOpens: 1, Reason: "no progress in 3 loops"}
		}, []string{"⛔", "breaker OPEN (opened 1×): no progress in 3 loops", "why: circuit_breaker_open: no progress", "next: /ralph reset 5, then /ralph loop 5"}, nil},
		{"a question", func(v *serve.TaskView) {
			v.State, v.Questions = fleet.Waiting, []string{"PostgreSQL or SQLite?"}
		}, []string{"❓ PostgreSQL or SQLite?", "reply to the question, or /ralph answer 5 text…"}, []string{"next:"}},
		{"waiting for a loop", func(v *serve.TaskView) { v.State, v.MaxLoops, v.LoopCount = fleet.Waiting, 0, 0 },
			[]string{"⏸ 5 · t3 waiting · loop 0\n", "next: /ralph loop 5 [max]"}, nil},
		{"a long title is clipped", func(v *serve.TaskView) { v.Title = strings.Repeat("word ", 100) }, []string{"…"}, nil},
	}
	for _, c := range cases {
		v := base
		c.edit(&v)
		got := taskText(v, now)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, got)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q in\n%s", c.name, w, got)
			}
		}
	}
}

func TestNoticeText(t *testing.T) {
	n := serve.Notice{Session: "5", TaskID: "t3", Title: "Build auth", Loops: 4, MaxLoops: 10, CostUSD: 0.5, Summary: "All wired."}
	cases := []struct {
		kind, reason, msg string
		questions         []string
		want              []string
	}{
		{serve.NoticeDone, "plan_complete", "plan_complete", nil, []string{"✅ 5 · t3 done (plan_complete) — 4/10 loops, $0.50", "Build auth", "last: All wired."}},
		{serve.NoticeHalted, "circuit_breaker_open", "circuit_breaker_open: no progress", nil,
			[]string{"⛔ 5 · t3 halted — circuit_breaker_open: no progress", "what to do: see /circuit 5", "/ralph reset 5, then /ralph loop 5"}},
		{serve.NoticeHalted, "permission_denied", "permission_denied: Bash(rm)", nil, []string{"ALLOWED_TOOLS", "ralph trust"}},
		{serve.NoticeHalted, "", "agent: not found", nil, []string{"fix the cause on the machine"}},
		{serve.NoticeQuestion, "needs_clarification", "", []string{"Which DB?", "Keep the API?"},
			[]string{"❓ 5 · t3 asks:", "• Which DB?\n• Keep the API?", "Reply to this message"}},
		{serve.NoticeStopped, "max_loops", "max_loops: reached the task's 10 loops", nil, []string{"⏸ 5 · t3 stopped — max_loops", "next: /ralph loop 5 [max]"}},
	}
	for _, c := range cases {
		m := n
		m.Kind, m.Reason, m.Message, m.Questions = c.kind, c.reason, c.msg, c.questions
		got := noticeText(m, now)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s/%s: no %q in\n%s", c.kind, c.reason, w, got)
			}
		}
	}
	m := n
	m.Kind, m.Until, m.Message = serve.NoticeUsageLimit, now.Add(3*time.Hour), "You've hit your 5-hour limit"
	if got := noticeText(m, now); !strings.Contains(got, "⏳ 5 · t3 waits for a usage limit until 2026-11-20 22:00 UTC (in 3h 0m)") || !strings.Contains(got, "5-hour limit") {
		t.Errorf("usage limit:\n%s", got)
	}
}

func TestListWatchdogCircuitText(t *testing.T) {
	sessions := []serve.Session{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	views := []serve.TaskView{{ID: "t1", Session: "a", Title: "One", State: fleet.Done, LoopCount: 2, MaxLoops: 10},
		{ID: "t2", Session: "b", Title: strings.Repeat("long ", 40), State: fleet.Running, LoopCount: 1, MaxLoops: 100}}
	got := listText(views, sessions)
	for _, w := range []string{"✅ a · t1 done · loop 2/10 — One", "▶️ b · t2 running · loop 1/100 — long", "no task yet: c"} {
		if !strings.Contains(got, w) {
			t.Errorf("list: no %q in\n%s", w, got)
		}
	}
	if got := listText(nil, sessions); !strings.Contains(got, "No tasks yet. Start one: /ralph start a task…") {
		t.Errorf("empty list:\n%s", got)
	}
	if got := listText(nil, nil); !strings.Contains(got, "No sessions are registered") {
		t.Errorf("no sessions:\n%s", got)
	}

	if got := watchdogText(nil, now); !strings.Contains(got, "watches nothing") {
		t.Errorf("empty watchdog: %s", got)
	}
	got = watchdogText([]serve.WatchStatus{
		{Session: "5", Target: "claude-5", Active: true, TaskID: "t3", Status: "IN_PROGRESS", Seen: now.Add(-3 * time.Minute)},
		{Session: "6", Target: "claude-6", Message: "no such tmux session"},
	}, now)
	for _, w := range []string{"• 5 → claude-5: watching, task t3, STATUS IN_PROGRESS, changed 3m ago", "• 6 → claude-6: not watching (no such tmux session)"} {
		if !strings.Contains(got, w) {
			t.Errorf("watchdog: no %q in\n%s", w, got)
		}
	}

	v := serve.TaskView{ID: "t3", Session: "5", CircuitBreaker: serve.BreakerView{State: "OPEN", TotalOpens: 2, Reason: "no progress", ConsecutiveNoProgress: 3, LastProgressLoop: 4, CurrentLoop: 7},
		History: []serve.HistoryItem{{Loop: 6, FilesModified: 0, ErrorsDetected: 1, StatusBlock: map[string]string{"STATUS": "IN_PROGRESS"}}, {Loop: 7}}}
	got = circuitText(v)
	for _, w := range []string{"⚡ 5 · breaker OPEN (opened 2×)", "why: no progress", "no progress 3 · same error 0 · last progress at loop 4 · now loop 7",
		"loop 6: 0 files, 1 errors, IN_PROGRESS", "loop 7: 0 files, 0 errors, no status", "reset: /ralph reset 5"} {
		if !strings.Contains(got, w) {
			t.Errorf("circuit: no %q in\n%s", w, got)
		}
	}
}

func TestHelpAndErrorText(t *testing.T) {
	full := helpText("", "")
	for _, u := range usage {
		if !strings.Contains(full, u.line) {
			t.Errorf("help lacks %q", u.line)
		}
	}
	if got := helpText("which session?", usageOf(Stop)); got != "🤔 which session?\nusage: "+usageOf(Stop) {
		t.Errorf("one line: %q", got)
	}
	for in, want := range map[error]string{
		&fleet.Error{Code: fleet.Conflict, Msg: "task t1 on session b is waiting for an answer: ralph task answer b TEXT…"}:        "⚠️ task t1 on session b is waiting for an answer: reply to the question, or /ralph answer b text…",
		&fleet.Error{Code: fleet.NotFound, Msg: "session b has no task; start one (ralph task start b TITLE…)"}:                    "⚠️ session b has no task; start one (/ralph start b task…)",
		&fleet.Error{Code: fleet.Conflict, Msg: "session a is busy with task t1 (running); cancel it first (ralph task cancel a)"}: "⚠️ session a is busy with task t1 (running); cancel it first (/ralph cancel a)",
		errors.New("disk full"): "⚠️ disk full",
	} {
		if got := errorText(in); got != want {
			t.Errorf("errorText(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestButtons(t *testing.T) {
	for data, ok := range map[string]bool{"stop:t3:5": true, "reset:t1:api.v2": true, "loop10:t9:a_b": true,
		"stop:t3": false, "rm:t3:5": false, "stop::5": false, "stop:t3:../x": false, "stop:t3:5:6": false} {
		if _, got := parseButton(data); got != ok {
			t.Errorf("parseButton(%q) = %v", data, got)
		}
	}
	if _, ok := newButton("x", actLoop10, "t12345", strings.Repeat("s", 64)); ok {
		t.Error("a button over 64 bytes of data")
	}
	cases := []struct {
		v    serve.TaskView
		want string
	}{
		{serve.TaskView{ID: "t1", Session: "5", State: fleet.Running}, "stop:t1:5"},
		{serve.TaskView{ID: "t1", Session: "5", State: fleet.Halted}, "reset:t1:5"},
		{serve.TaskView{ID: "t1", Session: "5", State: fleet.Waiting}, "loop10:t1:5"},
		{serve.TaskView{ID: "t1", Session: "5", State: fleet.Waiting, Questions: []string{"?"}}, ""},
		{serve.TaskView{ID: "t1", Session: "5", State: fleet.Done}, ""},
	}
	for _, c := range cases {
		var got []string
		for _, b := range taskButtons(c.v) {
			got = append(got, b.data)
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s: %v, want %q", c.v.State, got, c.want)
		}
	}
}
