package requests

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"ralph/internal/httpcap"
	"ralph/internal/requests/slacktest"
)

// counted is a body of n bytes that counts what is read of it.
type counted struct{ n, read int64 }

func (c *counted) Read(p []byte) (int, error) {
	if c.read >= c.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), c.n-c.read)
	for i := range p[:k] {
		p[i] = ' '
	}
	c.read += k
	return int(k), nil
}

// Each webhook reads at most its cap: a body declared larger is refused
// with 413 unread, an undeclared one is cut at the cap, and one without a
// signature is refused before any of it is read.
func TestWebhookBodyCaps(t *testing.T) {
	gh := newTestService(t)
	sl, _ := newSlackService(t)
	now := time.Now()
	for _, c := range []struct {
		name     string
		s        *Service
		path     string
		size     int64
		declared bool
		signed   bool
		code     int
		maxRead  int64
	}{
		{"github declared over 25 MiB", gh, GitHubWebhookPath, httpcap.GitHubBody + 1, true, true, 413, 0},
		{"github streamed over 25 MiB", gh, GitHubWebhookPath, httpcap.GitHubBody + 1<<20, false, true, 413, httpcap.GitHubBody},
		{"github unsigned", gh, GitHubWebhookPath, 40 << 20, false, false, 401, 0},
		{"slack declared over 1 MiB", sl, SlackWebhookPath, httpcap.WebhookBody + 1, true, true, 413, 0},
		{"slack streamed over 1 MiB", sl, SlackWebhookPath, 4 << 20, false, true, 413, httpcap.WebhookBody},
		{"slack unsigned", sl, SlackWebhookPath, 4 << 20, false, false, 401, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := &counted{n: c.size}
			req := httptest.NewRequest("POST", c.path, body)
			req.ContentLength = -1
			if c.declared {
				req.ContentLength = c.size
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "issues")
			req.Header.Set("X-GitHub-Delivery", "d-big")
			if c.signed {
				req.Header.Set("X-Hub-Signature-256", "sha256=00")
				req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now.Unix(), 10))
				req.Header.Set("X-Slack-Signature", slacktest.Sign("slack-secret", now, nil))
			}
			w := httptest.NewRecorder()
			c.s.Routes()[c.path].ServeHTTP(w, req)
			if w.Code != c.code {
				t.Errorf("status %d, want %d: %s", w.Code, c.code, w.Body)
			}
			if body.read > c.maxRead+32<<10 {
				t.Errorf("read %d bytes of the body, the cap is %d", body.read, c.maxRead)
			}
			if c.code == http.StatusRequestEntityTooLarge && w.Header().Get("Connection") != "close" {
				t.Errorf("the connection is kept for more of an over-long body: %v", w.Header())
			}
		})
	}
}
