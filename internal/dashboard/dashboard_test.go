package dashboard

import (
	"bytes"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ralph/internal/loop"
	"ralph/internal/serve"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const testToken = "0123456789abcdef-test-token"

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newTestDashboard(t *testing.T, src Source) *Dashboard {
	t.Helper()
	d := New(src, Options{Token: testToken, Now: func() time.Time { return t0 }, Log: testLog{t}})
	t.Cleanup(d.Close)
	return d
}

// login returns the session cookie a browser gets from /?token=.
func login(t *testing.T, d *Dashboard) *http.Cookie {
	t.Helper()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "/?token="+testToken, nil))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
		t.Fatalf("login: %d %v", rec.Code, rec.Header())
	}
	cs := rec.Result().Cookies()
	if len(cs) != 1 {
		t.Fatalf("login cookies: %v", cs)
	}
	return cs[0]
}

// get requests path with the cookie (nil: none).
func get(d http.Handler, path string, c *http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	if c != nil {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, req)
	return rec
}

// post sends a form as a browser on this origin would, unless the
// headers say otherwise.
func post(d http.Handler, path string, c *http.Cookie, form url.Values, headers map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://example.com")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if c != nil {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, req)
	return rec
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	// The checklist lives in a temporary file whose path differs per run.
	got = regexp.MustCompile(`/tmp/[^"<\s]*`).ReplaceAll(got, []byte("TMP"))
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test -run %s -update rewrites it); got:\n%s", name, path, t.Name(), got)
	}
}

// Every page against its golden HTML: the same fleet in every state, with
// agent text that has to come out escaped.
func TestPagesGolden(t *testing.T) {
	d := newTestDashboard(t, fleetFixture(t))
	c := login(t, d)
	for name, path := range map[string]string{
		"overview":         "/",
		"overview-waiting": "/?state=waiting",
		"overview-none":    "/?state=queued",
		"task-running":     "/task/api",
		"task-question":    "/task/web",
		"task-halted":      "/task/ops",
		"task-done":        "/task/docs",
		"stats":            "/stats",
		"overview-done":    "/?state=done",
		"session":          "/session/docs",
		"detail":           "/tasks/t0",
		"iteration":        "/tasks/t0/iterations/1",
	} {
		t.Run(name, func(t *testing.T) {
			rec := get(d, path, c)
			if rec.Code != 200 {
				t.Fatalf("%s: %d\n%s", path, rec.Code, rec.Body)
			}
			body := rec.Body.String()
			if strings.Contains(body, testToken) {
				t.Error("the page shows the token")
			}
			if strings.Contains(body, "<script>") || strings.Contains(body, "<b>database") || strings.Contains(body, "<SQLite>") ||
				strings.Contains(body, "<all>") || strings.Contains(body, "<chapters>") {
				t.Error("agent or request text is not escaped")
			}
			golden(t, name, rec.Body.Bytes())
		})
	}
	rec := get(d, "/", nil)
	if rec.Code != 401 {
		t.Fatalf("no cookie: %d", rec.Code)
	}
	golden(t, "login", rec.Body.Bytes())
}

func TestFormats(t *testing.T) {
	for got, want := range map[string]string{
		usd(0): "$0", usd(0.0042): "$0.0042", usd(12.345): "$12.35",
		tokens(999): "999", tokens(12345): "12.3k", tokens(2500000): "2.5M",
		duration(950): "950ms", duration(41000): "41.0s", duration(125000): "2m05s",
		short(5, "a  b\ncdefg"): "a b …",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for v, want := range map[float64]float64{0: 1, 3: 5, 7: 10, 12: 20, 0.3: 0.5, 100: 100} {
		if got := niceMax(v); got != want {
			t.Errorf("niceMax(%v) = %v, want %v", v, got, want)
		}
	}
}

// testLog sends the dashboard's log to the test's.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestWhySaysWhatTheCheckMadeOfAClaim(t *testing.T) {
	run := &loop.VerifyRun{Command: "make test", ExitCode: 2}
	for _, tt := range []struct {
		m    loop.Metrics
		want string
	}{
		{loop.Metrics{Status: "COMPLETE", Verify: run}, "not verified: make test exited 2"},
		{loop.Metrics{Status: "COMPLETE", Verify: &loop.VerifyRun{Command: "make test"}, Verified: true}, "verified: make test passed"},
		{loop.Metrics{Status: "IN_PROGRESS"}, "status IN_PROGRESS"},
	} {
		if got := serve.Why(tt.m); !strings.Contains(got, tt.want) {
			t.Errorf("why = %q, want %q in it", got, tt.want)
		}
	}
}
