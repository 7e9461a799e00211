package telegram

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"ralph/internal/httpcap"
)

// The webhook reads at most 1 MiB, and nothing without the secret.
func TestWebhookBodyCap(t *testing.T) {
	b := New(Config{Token: testToken, AllowedChats: []int64{42}, WebhookSecret: "s3cret", WebhookURL: "https://x/webhooks/telegram"}, Options{})
	b.ready.Store(true)
	h := b.Routes()["POST "+WebhookPath]
	for _, c := range []struct {
		name     string
		secret   string
		size     int64
		declared bool
		code     int
		maxRead  int64
	}{
		{"declared over the cap", "s3cret", httpcap.WebhookBody + 1, true, 413, 0},
		{"streamed over the cap", "s3cret", 4 << 20, false, 413, httpcap.WebhookBody},
		{"without the secret", "", 4 << 20, false, 401, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := &countingReader{r: io.LimitReader(strings.NewReader(strings.Repeat(" ", int(c.size))), c.size)}
			req := httptest.NewRequest("POST", WebhookPath, body)
			req.ContentLength = -1
			if c.declared {
				req.ContentLength = c.size
			}
			if c.secret != "" {
				req.Header.Set("X-Telegram-Bot-Api-Secret-Token", c.secret)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != c.code {
				t.Errorf("status %d, want %d: %s", w.Code, c.code, w.Body)
			}
			if body.n > c.maxRead+32<<10 {
				t.Errorf("read %d bytes, the cap is %d", body.n, c.maxRead)
			}
		})
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}
