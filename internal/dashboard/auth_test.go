package dashboard

import (
	"net/http"
	"net/url"
	"ralph/internal/fleet"
	"strings"
	"testing"
	"time"
)

// Nothing but the assets without the token; the token logs a browser in
// with a cookie that is not the token; a forged or stale cookie is
// nobody's.
func TestAuth(t *testing.T) {
	f := fleetFixture(t)
	d := newTestDashboard(t, f)
	for _, path := range []string{"/", "/task/api", "/stats", "/events?view=overview", "/nowhere", "/?state=running"} {
		if rec := get(d, path, nil); rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), "Build the API") {
			t.Errorf("%s without the token: %d", path, rec.Code)
		}
	}
	for _, path := range []string{"/assets/style.css", "/assets/htmx-2.0.11.min.js", "/assets/htmx-ext-sse-2.2.4.min.js"} {
		if rec := get(d, path, nil); rec.Code != 200 || rec.Header().Get("Cache-Control") == "" {
			t.Errorf("%s: %d", path, rec.Code)
		}
	}
	if rec := get(d, "/?token=wrong", nil); rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 {
		t.Errorf("a wrong token: %d %v", rec.Code, rec.Result().Cookies())
	}
	// A login link works on any page and lands on it, without the token.
	for path, want := range map[string]string{
		"/task/api?token=" + testToken:            "/task/api",
		"/stats?token=" + testToken + "&range=7d": "/stats?range=7d",
		"/?token=" + testToken + "&state=running": "/?state=running",
	} {
		rec := get(d, path, nil)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want || len(rec.Result().Cookies()) != 1 {
			t.Errorf("%s: %d to %q, cookies %v; want a login landing on %s", path, rec.Code, rec.Header().Get("Location"), rec.Result().Cookies(), want)
		}
	}
	if rec := get(d, "/task/api?token=wrong", nil); rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 {
		t.Errorf("a wrong token on a task page: %d", rec.Code)
	}
	c := login(t, d)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge <= 0 {
		t.Errorf("cookie attributes: %+v", c)
	}
	if strings.Contains(c.Value, testToken) || c.Value == "" {
		t.Errorf("the cookie carries the token: %q", c.Value)
	}
	if rec := get(d, "/", c); rec.Code != 200 || !strings.Contains(rec.Body.String(), "Build the API") {
		t.Errorf("with the cookie: %d", rec.Code)
	}
	for name, v := range map[string]string{
		"forged mac":   c.Value[:len(c.Value)-4] + "0000",
		"other issue":  "v1.1." + c.Value[strings.LastIndex(c.Value, ".")+1:],
		"raw token":    testToken,
		"no version":   strings.TrimPrefix(c.Value, "v1."),
		"empty":        "",
		"from another": keys{token: []byte("another-token-entirely")}.session(t0),
	} {
		if rec := get(d, "/", &http.Cookie{Name: cookieName, Value: v}); rec.Code != http.StatusUnauthorized {
			t.Errorf("%s cookie: %d", name, rec.Code)
		}
	}
	k := keys{token: []byte(testToken)}
	if k.validSession(k.session(t0.Add(-cookieAge-time.Hour)), t0) || k.validSession(k.session(t0.Add(time.Hour)), t0) {
		t.Error("an expired or future cookie is valid")
	}
	// Bearer, as the API takes it.
	req := func(h string) int {
		r := get(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set("Authorization", h)
			d.ServeHTTP(w, r)
		}), "/stats", nil)
		return r.Code
	}
	if req("Bearer "+testToken) != 200 || req("Bearer wrong") != 401 || req(testToken) != 401 {
		t.Error("bearer auth")
	}
	// The login form takes the token in the body, from this origin only.
	rec := post(d, "/login", nil, url.Values{"token": {testToken}}, nil)
	if rec.Code != http.StatusSeeOther || len(rec.Result().Cookies()) != 1 {
		t.Errorf("login form: %d", rec.Code)
	}
	if rec := post(d, "/login", nil, url.Values{"token": {testToken}}, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); rec.Code != http.StatusForbidden {
		t.Errorf("login from another site: %d", rec.Code)
	}
	// Empty token: nobody gets in.
	empty := New(f, Options{Now: func() time.Time { return t0 }})
	defer empty.Close()
	if rec := get(empty, "/?token=", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("no token configured: %d", rec.Code)
	}
	if rec := get(d, "/", nil); rec.Header().Get("Content-Security-Policy") == "" || rec.Header().Get("X-Frame-Options") != "DENY" {
		t.Errorf("security headers: %v", rec.Header())
	}
}

// Actions are POSTs with the session's CSRF token from this origin; a
// Bearer client needs neither.
func TestActions(t *testing.T) {
	f := fleetFixture(t)
	d := newTestDashboard(t, f)
	c := login(t, d)
	csrf := d.keys.csrf(c.Value)
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {csrf}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, c2 := range []struct {
		name    string
		path    string
		form    url.Values
		headers map[string]string
		cookie  bool
		code    int
		asked   string
	}{
		{"stop", "/task/api/stop", form(), nil, true, 303, "stop api"},
		{"pause", "/task/api/pause", form(), nil, true, 303, "pause api"},
		{"resume", "/task/api/resume", form(), nil, true, 303, "resume api"},
		{"reset", "/task/ops/reset", form(), nil, true, 303, "reset ops"},
		{"loop", "/task/ops/loop", form("max", "5"), nil, true, 303, "loop ops 5"},
		{"answer", "/task/web/answer", form("text", " SQLite "), nil, true, 303, "answer web SQLite"},
		{"cancel asks first", "/task/ops/cancel", form(), nil, true, 200, ""},
		{"cancel", "/task/ops/cancel", form("confirm", "yes"), nil, true, 303, "cancel ops"},
		{"retry", "/task/ops/retry", form(), nil, true, 303, "retry ops"},
		{"new task, looped", "/start", form("session", "spare", "title", "Add a health check", "max", "20"), nil, true, 303, `start_loop spare "Add a health check" 20`},
		{"new task, not looped", "/start", form("session", "spare", "title", "Plan it", "max", "0"), nil, true, 303, `start spare "Plan it" 0`},
		{"new task without a title", "/start", form("session", "spare", "title", " ", "max", "5"), nil, true, 400, ""},
		{"new task, bad count", "/start", form("session", "spare", "title", "x", "max", "many"), nil, true, 400, ""},
		{"new task without csrf", "/start", url.Values{"session": {"spare"}, "title": {"x"}, "max": {"1"}}, nil, true, 403, ""},
		{"no csrf", "/task/api/stop", url.Values{}, nil, true, 403, ""},
		{"wrong csrf", "/task/api/stop", url.Values{"csrf": {strings.Repeat("0", 64)}}, nil, true, 403, ""},
		{"other origin", "/task/api/stop", form(), map[string]string{"Origin": "http://evil.example"}, true, 403, ""},
		{"cross-site fetch", "/task/api/stop", form(), map[string]string{"Sec-Fetch-Site": "cross-site"}, true, 403, ""},
		{"no origin nor referer", "/task/api/stop", form(), map[string]string{"Origin": "", "Sec-Fetch-Site": ""}, true, 403, ""},
		{"referer of this host", "/task/api/stop", form(), map[string]string{"Origin": "", "Referer": "http://example.com/task/api"}, true, 303, "stop api"},
		{"no cookie", "/task/api/stop", form(), nil, false, 401, ""},
		{"bearer", "/task/api/stop", url.Values{}, map[string]string{"Authorization": "Bearer " + testToken, "Origin": ""}, false, 303, "stop api"},
		{"bad loop count", "/task/ops/loop", form("max", "zero"), nil, true, 400, ""},
		{"empty answer", "/task/web/answer", form("text", "  "), nil, true, 400, ""},
		{"unknown verb", "/task/api/dance", form(), nil, true, 404, ""},
		{"refused by the daemon", "/task/docs/stop", form(), nil, true, 409, "stop docs"},
	} {
		t.Run(c2.name, func(t *testing.T) {
			f.mu.Lock()
			f.asked = nil
			f.mu.Unlock()
			cookie := c
			if !c2.cookie {
				cookie = nil
			}
			rec := post(d, c2.path, cookie, c2.form, c2.headers)
			if rec.Code != c2.code {
				t.Errorf("%d, want %d\n%s", rec.Code, c2.code, rec.Body)
			}
			f.mu.Lock()
			asked := strings.Join(f.asked, "; ")
			f.mu.Unlock()
			if asked != c2.asked {
				t.Errorf("asked %q, want %q", asked, c2.asked)
			}
			if c2.code == 303 && c2.path == "/start" {
				if loc := rec.Header().Get("Location"); loc != "/task/spare" {
					t.Errorf("redirect to %q", loc)
				}
			} else if c2.code == 303 && rec.Header().Get("Location") != "/task/"+strings.Split(c2.path, "/")[2] {
				t.Errorf("redirect to %q", rec.Header().Get("Location"))
			}
			if c2.code == 409 && !strings.Contains(rec.Body.String(), "is not looping (done)") {
				t.Errorf("the refusal is not shown:\n%s", rec.Body)
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.who {
		if w.Surface != fleet.SurfaceWeb {
			t.Errorf("a dashboard command came from %s", w)
		}
	}
}
