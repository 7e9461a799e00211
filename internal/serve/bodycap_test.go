package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ralph/internal/httpcap"
)

// bigBody is n bytes of a JSON string's inside, counting what is read.
type bigBody struct{ n, read int64 }

func (b *bigBody) Read(p []byte) (int, error) {
	if b.read >= b.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), b.n-b.read)
	for i := range p[:k] {
		p[i] = 'x'
	}
	if b.read == 0 {
		copy(p, `{"session":"a","title":"`)
	}
	b.read += k
	return int(k), nil
}

// Every route's body is capped before its handler parses it: the API's
// JSON at 1 MiB, the dashboard's forms at 64 KiB, and a webhook that caps
// nothing itself at GitHub's 25 MiB.
func TestBodyCaps(t *testing.T) {
	d := webDaemon(t)
	reads := func(limit int64) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); httpcap.TooLarge(err) {
				httpcap.RefuseTooLarge(w, limit)
			}
		})
	}
	d.opts.Routes = map[string]http.Handler{"POST /webhooks/x": reads(httpcap.GitHubBody)}
	d.SetWeb(reads(httpcap.FormBody))
	h := d.Handler("tok")
	for _, c := range []struct {
		path     string
		size     int64
		declared bool
		code     int
		cap      int64
	}{
		{"/api/tasks", httpcap.APIBody + 1, true, 413, 0},
		{"/api/tasks", 3 * httpcap.APIBody, false, 413, httpcap.APIBody},
		{"/api/tasks/a/answer", 3 * httpcap.APIBody, false, 413, httpcap.APIBody},
		{"/api/tasks", 200 << 10, false, 400, 200 << 10}, // under the cap: read, then refused for what it says
		{"/login", httpcap.FormBody + 1, true, 413, 0},
		{"/login", 1 << 20, false, 413, httpcap.FormBody},
		{"/webhooks/x", httpcap.GitHubBody + 1, true, 413, 0},
	} {
		body := &bigBody{n: c.size}
		req := httptest.NewRequest("POST", c.path, body)
		req.Header.Set("Authorization", "Bearer tok")
		req.ContentLength = -1
		if c.declared {
			req.ContentLength = c.size
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.code {
			t.Errorf("%s, %d bytes: %d %s, want %d", c.path, c.size, rec.Code, rec.Body, c.code)
		}
		if body.read > c.cap+32<<10 {
			t.Errorf("%s: read %d bytes, the cap is %d", c.path, body.read, c.cap)
		}
		if c.code == 413 && !strings.Contains(rec.Body.String(), "larger than") && !strings.Contains(rec.Body.String(), "at most") {
			t.Errorf("%s: the refusal does not say why: %s", c.path, rec.Body)
		}
	}
}
