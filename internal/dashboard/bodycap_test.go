package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A form over its cap is refused with 413 (the daemon also refuses one
// that declares a larger length before the dashboard sees it).
func TestFormCaps(t *testing.T) {
	d := newTestDashboard(t, fleetFixture(t))
	cookie := login(t, d)
	big := strings.Repeat("x", 70<<10)
	if rec := post(d, "/login", nil, url.Values{"token": {big[:5<<10]}}, nil); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 5 KiB login form: %d", rec.Code)
	}
	csrf := d.keys.csrf(d.who(reqWith(cookie)).session)
	if rec := post(d, "/task/web/answer", cookie, url.Values{"csrf": {csrf}, "text": {big}}, nil); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 70 KiB answer: %d %s", rec.Code, rec.Body)
	}
	if rec := post(d, "/task/web/answer", cookie, url.Values{"csrf": {csrf}, "text": {"SQLite"}}, nil); rec.Code/100 != 3 {
		t.Errorf("a small answer: %d %s", rec.Code, rec.Body)
	}
}

func reqWith(c *http.Cookie) *http.Request {
	r, _ := http.NewRequest("GET", "/", nil)
	r.AddCookie(c)
	return r
}
