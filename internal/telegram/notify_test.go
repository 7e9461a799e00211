package telegram

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"ralph/internal/serve"
)

// The daemon's outbox delivers at least once: a notice tried again after
// it got through (the daemon killed before it recorded the delivery) is
// not sent twice, also after a restart; Telegram failing past the retries
// is an error, for the outbox to try again, and the next try sends it.
func TestBotDeliversAnIDOnce(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	q := serve.Notice{ID: "n1.x", Kind: serve.NoticeQuestion, Session: "5", TaskID: "t1", Origin: "cli", Questions: []string{"Keep it?"}}
	for range 2 {
		if err := r.bot.Deliver(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r.restart(Config{Token: testToken, AllowedChats: []int64{42, -100}, APIURL: r.api.URL})
	if err := r.bot.Deliver(ctx, q); err != nil {
		t.Fatal(err)
	}
	if n := count(r, "5 · t1 asks"); n != 1 {
		t.Errorf("the question was sent %d times", n)
	}

	done := serve.Notice{ID: "n2.x", Kind: serve.NoticeDone, Session: "5", TaskID: "t1", Origin: "cli"}
	r.api.FailNext("sendMessage", sendAttempts, http.StatusBadGateway, 0)
	if err := r.bot.Deliver(ctx, done); err == nil || !strings.Contains(err.Error(), "502") {
		t.Errorf("Telegram failing past the retries: %v", err)
	}
	if err := r.bot.Deliver(ctx, done); err != nil {
		t.Errorf("the next try: %v", err)
	}
	if n := count(r, "5 · t1 done"); n != 1 {
		t.Errorf("the end was sent %d times", n)
	}
}

func count(r *rig, sub string) int {
	n := 0
	for _, m := range r.api.Sent() {
		if strings.Contains(m.Text, sub) {
			n++
		}
	}
	return n
}
