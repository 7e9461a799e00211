// Package dashboard is `ralph serve`'s web dashboard: an overview of the
// fleet's tasks, a page per task (iterations, breaker, question, the
// agent's live activity, checklist, actions), the history (a session's
// tasks, a finished task, an iteration's log) and statistics. Pages are
// rendered on the server with html/template and work without JavaScript;
// with it, htmx and its SSE extension (vendored in assets/) swap in
// fragments the server renders from the daemon's event stream, so an open
// page is live without polling. See docs/dashboard.md.
//
// The dashboard reaches the daemon only through Source, which
// *serve.Daemon implements; the daemon mounts it at / (serve.SetWeb).
package dashboard

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/redact"
	"ralph/internal/serve"
)

// Source is what the dashboard needs of the daemon.
type Source interface {
	List() ([]serve.TaskView, error)
	Status(session string) (serve.TaskView, error)
	Sessions() ([]serve.Session, error)
	Usage() (map[string]serve.TaskUsage, error)
	Records(session, taskID string) (serve.TaskRecords, error)
	Iterations() ([]serve.SessionIteration, error)
	PauseRequested(session string) bool
	Subscribe() (<-chan serve.Event, func())

	// The history: every kept task, by filter; the count of each state;
	// one task with its iterations; one iteration with its log.
	History(f serve.TaskFilter) ([]serve.TaskView, error)
	StateCounts() (map[fleet.State]int, error)
	Show(id string) (serve.TaskDetail, error)
	IterationLogOf(id string, n int) (serve.IterationLog, error)

	// Do carries out a person's command: the one way the dashboard
	// changes the fleet, as every surface does.
	Do(ctx context.Context, c fleet.Command) (serve.TaskView, error)
}

// Options configure a dashboard.
type Options struct {
	// Token is the API token; empty refuses everybody.
	Token string
	// Now is the clock (nil: time.Now); tests fix it.
	Now func() time.Time
	// Log receives the dashboard's own problems (nil: discarded).
	Log io.Writer
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Dashboard is the web handler.
type Dashboard struct {
	src   Source
	keys  keys
	token []byte
	now   func() time.Time
	log   io.Writer
	tmpl  *template.Template
	mux   *http.ServeMux
	feed  *feed

	chMu  sync.Mutex
	chans map[channelKey]*channel // the open streams' channels
}

// New builds the dashboard and starts following src's events; Close
// stops that.
func New(src Source, opts Options) *Dashboard {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	d := &Dashboard{src: src, keys: keys{token: []byte(opts.Token)}, token: []byte(opts.Token), now: opts.Now, log: opts.Log,
		chans: map[channelKey]*channel{},
		tmpl:  template.Must(template.New("").Funcs(funcs(opts.Now)).ParseFS(templateFS, "templates/*.html"))}
	d.feed = startFeed(src, opts.Log)
	assets, _ := fs.Sub(assetFS, "assets")
	m := http.NewServeMux()
	m.Handle("GET /assets/", http.StripPrefix("/assets/", cacheable(http.FileServerFS(assets))))
	m.HandleFunc("GET /{$}", d.overview)
	m.HandleFunc("POST /login", d.loginForm)
	m.HandleFunc("POST /logout", d.logout)
	m.HandleFunc("GET /task/{session}", d.guard(d.taskPage))
	m.HandleFunc("POST /task/{session}/{verb}", d.action)
	m.HandleFunc("POST /start", d.start)
	m.HandleFunc("GET /session/{session}", d.guard(d.sessionPage))
	m.HandleFunc("GET /tasks/{id}", d.guard(d.detailPage))
	m.HandleFunc("GET /tasks/{id}/iterations/{n}", d.guard(d.iterationPage))
	m.HandleFunc("GET /stats", d.guard(d.statsPage))
	m.HandleFunc("GET /events", d.guard(d.events))
	m.HandleFunc("/", d.guard(func(w http.ResponseWriter, r *http.Request) {
		d.refuse(w, r, http.StatusNotFound, "There is no such page.")
	}))
	d.mux = m
	return d
}

// Close stops following the daemon's events and ends the open streams.
func (d *Dashboard) Close() { d.feed.close() }

func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Nothing but this origin's own files; no framing; no referrer
	// leaves the dashboard.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	d.mux.ServeHTTP(w, r)
}

// cacheable lets browsers keep the embedded assets: they change only
// with the binary, and their names carry no secret.
func cacheable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// page is what every page's layout needs.
type page struct {
	Title string
	Nav   string // "overview", "stats" or ""
	CSRF  string
	// Stream is the page's event stream ("": the page is not live).
	Stream string
}

func (d *Dashboard) pageFor(r *http.Request, title, nav, stream string) page {
	p := page{Title: title, Nav: nav, Stream: stream}
	if c := d.who(r); c.session != "" {
		p.CSRF = d.keys.csrf(c.session)
	}
	return p
}

// render executes a template into a buffer first, so a failure sends an
// error page instead of half a page, and a final guard masks the API
// token and every secret ralph knows should one ever be part of the data
// (the daemon's views are masked already).
func (d *Dashboard) render(w http.ResponseWriter, code int, name string, data any) {
	var b bytes.Buffer
	if err := d.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		fmt.Fprintf(d.log, "dashboard: render %s: %v\n", name, err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(d.scrub(b.Bytes()))
}

// fragment renders a template to a string for the event stream.
func (d *Dashboard) fragment(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := d.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return "", err
	}
	return string(d.scrub(b.Bytes())), nil
}

func (d *Dashboard) scrub(b []byte) []byte {
	if len(d.token) >= 8 && bytes.Contains(b, d.token) {
		b = bytes.ReplaceAll(b, d.token, []byte("[REDACTED]"))
	}
	return redact.ValuesBytes(b)
}

// refusal is the login or error page.
type refusal struct {
	page
	Code    int
	Message string
	Login   bool
}

func (d *Dashboard) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	title := http.StatusText(code)
	login := code == http.StatusUnauthorized
	if login {
		title = "Log in"
	}
	d.render(w, code, "refusal.html", refusal{page: d.pageFor(r, title, "", ""), Code: code, Message: msg, Login: login})
}
