package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"ralph/internal/agent/fakeagent/script"
	"ralph/internal/serve"
	"ralph/internal/servetest"
	"ralph/internal/telegram/telegramtest"
)

// A question asked while Telegram is out of reach, the daemon then killed
// (SIGKILL) before it could tell the chat: the next daemon tells it, once,
// and a reply to that message answers the task. A later restart sends
// nothing again.
func TestTelegramQuestionSurvivesAKill(t *testing.T) {
	r, api := telegramRig(t)
	r.Session("5", script.Script{Iterations: []script.Iteration{
		{StdoutLines: []json.RawMessage{servetest.ResultLine("sess-5", "Stuck."+servetest.Question("Keep the old API?"))}},
		{Files: map[string]string{"api.txt": "kept\n"},
			StdoutLines: []json.RawMessage{servetest.ResultLine("sess-5", "Kept it, done."+servetest.CompleteStatus)}},
	}})
	r.Start(1)
	api.FailNext("sendMessage", 100000, http.StatusBadGateway, 0)
	r.OK("start", "5", "Out of reach")
	r.OK("loop", "5")
	r.WaitFor("5", "its question", func(v serve.TaskView) bool { return len(v.Questions) > 0 })
	r.Kill()
	if n := countSent(api, "asks:"); n != 0 {
		t.Fatalf("the question reached the chat through a failing API: %d", n)
	}

	api.Heal()
	r.Start(1)
	q := said(t, api, 0, "❓ 5 · t1 asks:")
	if !q.ForceReply || q.ChatID != 42 || !strings.Contains(q.Text, "Keep the old API?") {
		t.Fatalf("question: %+v", q)
	}
	n := len(api.Sent())
	api.Reply(tgOwner, q.MessageID, "Yes, keep it.")
	said(t, api, n, "✅ 5 · t1 done")
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	r.Start(1)
	r.WaitFor("5", "done", servetest.StateIs("done"))
	time.Sleep(2 * time.Second) // what a restart would send again, it sends at once
	if asks, done := countSent(api, "asks:"), countSent(api, "✅ 5 · t1 done"); asks != 1 || done != 1 {
		t.Errorf("the chat heard the question %d times and the end %d times", asks, done)
	}
}

func countSent(api *telegramtest.Server, sub string) int {
	n := 0
	for _, m := range api.Sent() {
		if strings.Contains(m.Text, sub) {
			n++
		}
	}
	return n
}
