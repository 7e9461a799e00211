package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"ralph/internal/httpcap"
)

// How a browser logs in (DESIGN.md, "The fleet": auth). `GET /?token=TOKEN`
// or the login form checks the API token once and sets a session cookie;
// the cookie is not the token but "v1.<issued>.<mac>", mac an HMAC-SHA256
// keyed by the token. So it survives a daemon restart, dies when the
// token changes, expires after cookieAge, and reveals nothing of the
// token. Non-browser clients send "Authorization: Bearer TOKEN" instead.
//
// Actions are POSTs. A cookie-authenticated POST must carry the CSRF
// token of its session (an HMAC of the cookie, in a hidden form field,
// compared in constant time) and come from this origin (Origin, else
// Referer, must name the request's host; Sec-Fetch-Site, when sent, must
// be same-origin). A Bearer request needs neither: browsers never add
// that header on their own.

const (
	cookieName = "ralph_session"
	cookieAge  = 30 * 24 * time.Hour
	csrfField  = "csrf"
)

type keys struct {
	token []byte
}

func (k keys) mac(parts ...string) string {
	m := hmac.New(sha256.New, k.token)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// session makes a cookie value issued at now.
func (k keys) session(now time.Time) string {
	issued := strconv.FormatInt(now.Unix(), 10)
	return "v1." + issued + "." + k.mac("session", issued)
}

// validSession checks a cookie value's MAC and age.
func (k keys) validSession(v string, now time.Time) bool {
	ver, rest, ok := strings.Cut(v, ".")
	if !ok || ver != "v1" {
		return false
	}
	issued, mac, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(mac), []byte(k.mac("session", issued))) != 1 {
		return false
	}
	sec, err := strconv.ParseInt(issued, 10, 64)
	if err != nil {
		return false
	}
	at := time.Unix(sec, 0)
	return !at.After(now.Add(time.Minute)) && now.Sub(at) < cookieAge
}

// csrf is the CSRF token of a session cookie.
func (k keys) csrf(session string) string { return k.mac("csrf", session) }

// tokenOK compares a presented token with the API token in constant time.
func (k keys) tokenOK(got string) bool {
	return len(k.token) > 0 && subtle.ConstantTimeCompare([]byte(got), k.token) == 1
}

// caller is how a request authenticated.
type caller struct {
	ok      bool
	bearer  bool   // by the Authorization header
	session string // the cookie value, when by cookie
}

func (d *Dashboard) who(r *http.Request) caller {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, found := strings.CutPrefix(h, "Bearer ")
		return caller{ok: found && d.keys.tokenOK(tok), bearer: true}
	}
	c, err := r.Cookie(cookieName)
	if err == nil && d.keys.validSession(c.Value, d.now()) {
		return caller{ok: true, session: c.Value}
	}
	return caller{}
}

// login sets the session cookie and sends the browser to /, so the token
// leaves the address bar and the history.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request, token string) {
	if !d.keys.tokenOK(token) {
		d.refuse(w, r, http.StatusUnauthorized, "That token is wrong.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: d.keys.session(d.now()), Path: "/",
		MaxAge: int(cookieAge / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, landing(r), http.StatusSeeOther)
}

// landing is where a login by link lands: the page it was asked for,
// without the token (so it leaves the address bar and the history), or
// the overview for a form's login.
func landing(r *http.Request) string {
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/") || strings.HasPrefix(r.URL.Path, "//") {
		return "/"
	}
	q := r.URL.Query()
	q.Del("token")
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	return u.String()
}

// loginBody caps the login form: a token and a CSRF field.
const loginBody = 4 << 10

// loginForm is POST /login: the token from a form field, so it is never
// in a URL at all.
func (d *Dashboard) loginForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, loginBody)
	err := r.ParseForm()
	if httpcap.TooLarge(err) {
		d.refuse(w, r, http.StatusRequestEntityTooLarge, "The login form takes at most "+httpcap.Size(loginBody)+".")
		return
	}
	if err != nil || !sameOrigin(r) {
		d.refuse(w, r, http.StatusForbidden, "The login form must be sent from this page.")
		return
	}
	d.login(w, r, r.PostForm.Get("token"))
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	if !d.checkPost(w, r) {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// guard serves next only to an authenticated caller; others get the
// login page (401) and nothing else.
func (d *Dashboard) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// A login link works on any page and lands on it.
		if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet {
			d.login(w, r, tok)
			return
		}
		if !d.who(r).ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ralph"`)
			d.refuse(w, r, http.StatusUnauthorized, "")
			return
		}
		next(w, r)
	}
}

// checkPost checks an action's CSRF token and origin; it answers the
// refusal itself.
func (d *Dashboard) checkPost(w http.ResponseWriter, r *http.Request) bool {
	c := d.who(r)
	if !c.ok {
		d.refuse(w, r, http.StatusUnauthorized, "")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, httpcap.FormBody)
	err := r.ParseForm()
	if httpcap.TooLarge(err) {
		d.refuse(w, r, http.StatusRequestEntityTooLarge, "The form is larger than "+httpcap.Size(httpcap.FormBody)+".")
		return false
	}
	if err != nil {
		d.refuse(w, r, http.StatusBadRequest, "The form could not be read.")
		return false
	}
	if c.bearer {
		return true
	}
	want := d.keys.csrf(c.session)
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get(csrfField)), []byte(want)) != 1 || !sameOrigin(r) {
		d.refuse(w, r, http.StatusForbidden, "This form is stale or was not sent from this dashboard: reload the page and try again.")
		return false
	}
	return true
}

// sameOrigin reports whether a browser's POST comes from a page of this
// host.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return false
	}
	from := r.Header.Get("Origin")
	if from == "" || from == "null" {
		from = r.Header.Get("Referer")
	}
	u, err := url.Parse(from)
	if from == "" || err != nil {
		return false
	}
	return u.Host == r.Host && (u.Scheme == "http" || u.Scheme == "https")
}
