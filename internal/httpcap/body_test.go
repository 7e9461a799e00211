package httpcap

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A body over the cap is refused with 413: unread when it declares its
// length, cut at the cap when it does not; a body under it passes whole.
func TestBody(t *testing.T) {
	const limit = 1000
	var read int
	h := Body(limit, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		read = len(b)
		if TooLarge(err) {
			RefuseTooLarge(w, limit)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	for _, c := range []struct {
		name     string
		size     int
		declared bool
		code     int
		maxRead  int
	}{
		{"declared, under", limit, true, 204, limit},
		{"declared, over", limit + 1, true, 413, 0},
		{"chunked, under", limit, false, 204, limit},
		{"chunked, over", 50 * limit, false, 413, limit},
	} {
		t.Run(c.name, func(t *testing.T) {
			read = -1
			r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", c.size)))
			if !c.declared {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.code {
				t.Errorf("status %d, want %d (%s)", w.Code, c.code, w.Body)
			}
			if read > c.maxRead {
				t.Errorf("the handler read %d bytes, more than %d", read, c.maxRead)
			}
			if c.code == 413 && !strings.Contains(w.Body.String(), "at most 1000 bytes") {
				t.Errorf("the refusal does not name the cap: %q", w.Body)
			}
		})
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{25 << 20: "25 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
