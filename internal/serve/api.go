package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/httpcap"
	"ralph/internal/redact"
	"ralph/internal/store"
)

// EnvToken sets the API token; without it the daemon creates one in
// RALPH_HOME that local clients read.
const EnvToken = "RALPH_API_TOKEN"

// DaemonSecrets are the daemon's own credentials: no agent's environment
// gets them (an agent reads other people's text; what it never sees it
// cannot be talked into leaking).
var DaemonSecrets = []string{"RALPH_API_TOKEN", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "GITHUB_TOKEN",
	"GITHUB_WEBHOOK_SECRET", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "RALPH_TEMPORAL_API_KEY"}

// Token returns the API token: $RALPH_API_TOKEN, else the one in home,
// created (mode 0600) when create is set and there is none.
func Token(home Home, create bool) (string, error) {
	if t := strings.TrimSpace(os.Getenv(EnvToken)); t != "" {
		return t, nil
	}
	b, err := os.ReadFile(home.TokenFile())
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if !create {
		return "", fmt.Errorf("no API token: set %s or run the client where it can read %s", EnvToken, home.TokenFile())
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	if err := store.WriteFileAtomic(home.TokenFile(), []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// NewToken is a fresh API token: 32 random bytes, in hex.
func NewToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return hex.EncodeToString(raw), nil
}

// Loopback reports whether addr (host:port) listens only on this machine.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler is the HTTP API under /api/, and the dashboard at / once
// mounted (SetWeb).
func (d *Daemon) Handler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tasks", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("all") && !q.Has("session") && !q.Has("state") && !q.Has("origin") && !q.Has("since") {
			b, err := d.listJSON()
			if err != nil {
				reply(w, nil, err)
				return
			}
			defer d.list.put(b)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			_, _ = w.Write(b)
			return
		}
		f, err := d.filterOf(q)
		if err != nil {
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
		v, err := d.History(f)
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/tasks/id/{id}", func(w http.ResponseWriter, r *http.Request) {
		v, err := d.Show(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/tasks/id/{id}/iterations/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n < 1 {
			fail(w, http.StatusBadRequest, fmt.Sprintf("iteration: %q is not a number, 1 or more", r.PathValue("n")))
			return
		}
		v, err := d.IterationLogOf(r.PathValue("id"), n)
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/budget", func(w http.ResponseWriter, r *http.Request) {
		v, err := d.Budget()
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/sessions", func(w http.ResponseWriter, r *http.Request) {
		v, err := d.Sessions()
		if v == nil {
			v = []Session{}
		}
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/tasks/{session}", func(w http.ResponseWriter, r *http.Request) {
		v, err := d.Status(r.PathValue("session"))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/tasks", func(w http.ResponseWriter, r *http.Request) {
		var req StartRequest
		if !decode(w, r, &req) {
			return
		}
		if req.Origin != "" && !validOrigin(req.Origin) {
			fail(w, http.StatusBadRequest, fmt.Sprintf("origin: %q is not one of %s", req.Origin, strings.Join(Origins, ", ")))
			return
		}
		c := fleet.Command{Verb: fleet.Start, Session: req.Session, Title: req.Title, Origin: req.Origin, Who: apiWho(r)}
		if req.MaxLoops > 0 {
			c.Verb, c.MaxLoops = fleet.StartLoop, req.MaxLoops
		}
		v, err := d.Do(r.Context(), c)
		replyStatus(w, http.StatusCreated, v, err)
	})
	// One command in the shape every surface uses.
	mux.HandleFunc("POST /api/commands", func(w http.ResponseWriter, r *http.Request) {
		var c fleet.Command
		if !decode(w, r, &c) {
			return
		}
		c.Who = apiWho(r) // a client says what it is, never another surface
		status := http.StatusOK
		if c.Verb == fleet.Start || c.Verb == fleet.StartLoop {
			status = http.StatusCreated
		}
		v, err := d.Do(r.Context(), c)
		replyStatus(w, status, v, err)
	})
	mux.HandleFunc("POST /api/tasks/{session}/{verb}", func(w http.ResponseWriter, r *http.Request) {
		c := fleet.Command{Verb: fleet.Verb(r.PathValue("verb")), Session: r.PathValue("session"), Who: apiWho(r)}
		switch c.Verb {
		case fleet.Loop, fleet.Retry:
			var req LoopRequest
			if !decode(w, r, &req) {
				return
			}
			c.MaxLoops = req.MaxLoops
		case fleet.Answer:
			var req AnswerRequest
			if !decode(w, r, &req) {
				return
			}
			c.Text = req.Text
		case fleet.Stop, fleet.Cancel, fleet.Reset, fleet.Pause, fleet.Resume:
		default:
			fail(w, http.StatusNotFound, fmt.Sprintf("unknown request %q (loop, stop, cancel, reset, retry, answer, pause, resume)", c.Verb))
			return
		}
		v, err := d.Do(r.Context(), c)
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/replay/{id}", func(w http.ResponseWriter, r *http.Request) {
		v, err := d.Replay(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/watchdog", func(w http.ResponseWriter, r *http.Request) {
		reply(w, d.Watchdog(), nil)
	})
	mux.HandleFunc("GET /api/events", d.events)
	mux.Handle("GET /metrics", d.Metrics())
	// Every body is capped before anything reads it; the webhooks cap
	// their own (a GitHub delivery may be 25 MiB), and every other route
	// is under the API's cap.
	api := httpcap.Body(httpcap.APIBody, auth(token, mux))
	if len(d.opts.Routes) == 0 && d.web == nil {
		return d.timed(api)
	}
	// Webhooks authenticate by their own signatures; the dashboard by its
	// cookie or the token; the API by the token alone.
	top := http.NewServeMux()
	for pattern, h := range d.opts.Routes {
		// Each webhook caps its body for itself; this is the ceiling for
		// one that does not.
		top.Handle(pattern, httpcap.Body(httpcap.GitHubBody, h))
	}
	top.Handle("/api/", api)
	top.Handle("/metrics", api)
	if d.web != nil {
		top.Handle("/", httpcap.Body(httpcap.FormBody, d.web))
	} else {
		top.Handle("/", api)
	}
	// Each request is timed under the route it matched.
	return d.timed(top)
}

// Origins are where a task may come from: a task's origin field.
var Origins = []string{"cli", "api", "dashboard", "telegram", "github", "slack"}

func validOrigin(o string) bool { return slices.Contains(Origins, o) }

// Requests of the API.
type (
	StartRequest struct {
		Session string `json:"session"`
		Title   string `json:"title"`
		Origin  string `json:"origin,omitempty"`
		// MaxLoops, when more than 0, loops the new task at once.
		MaxLoops int `json:"max_loops,omitempty"`
	}
	LoopRequest struct {
		MaxLoops int `json:"max_loops"`
	}
	AnswerRequest struct {
		Text string `json:"text"`
	}
	// ErrorReply is the body of every refusal.
	ErrorReply struct {
		Error string `json:"error"`
	}
)

// auth lets a request through only with the token; the comparison takes
// the same time whatever the guess.
func auth(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ralph"`)
			fail(w, http.StatusUnauthorized, "missing or wrong token (Authorization: Bearer TOKEN)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// decode reads a JSON body (under httpcap.APIBody, capped before it
// reaches here), refusing unknown fields so a misspelt one is named
// instead of ignored.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if httpcap.TooLarge(err) {
		fail(w, http.StatusRequestEntityTooLarge, "body: larger than "+httpcap.Size(httpcap.APIBody))
		return false
	}
	if err != nil && !errors.Is(err, io.EOF) {
		var te *json.UnmarshalTypeError
		msg := "body: " + err.Error()
		if errors.As(err, &te) {
			msg = fmt.Sprintf("%s: want a %s", te.Field, te.Type)
		} else if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			msg = fmt.Sprintf("%s: unknown field", strings.Trim(f, `"`))
		}
		fail(w, http.StatusBadRequest, msg)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any, err error) { replyStatus(w, http.StatusOK, v, err) }

func replyStatus(w http.ResponseWriter, code int, v any, err error) {
	if err != nil {
		var fe *fleet.Error
		switch {
		case errors.As(err, &fe) && fe.Code == fleet.NotFound:
			fail(w, http.StatusNotFound, fe.Msg)
		case errors.As(err, &fe) && fe.Code == fleet.Invalid:
			fail(w, http.StatusBadRequest, fe.Msg)
		case errors.As(err, &fe):
			fail(w, http.StatusConflict, fe.Msg)
		default:
			fail(w, http.StatusInternalServerError, err.Error())
		}
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// Whatever a reply holds, its secrets stay here.
	_, _ = w.Write(redact.Encoded(append(b, '\n')))
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(ErrorReply{Error: store.Redact(msg)})
}

// events streams task events as Server-Sent Events until the client goes.
func (d *Daemon) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	ch, unsubscribe := d.hub.subscribe()
	defer unsubscribe()
	beforeWrite := httpcap.Stream(w, r)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	beforeWrite()
	fmt.Fprint(w, ": ralph events\n\n")
	fl.Flush()
	keep := time.NewTicker(20 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			beforeWrite()
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev, ok := <-ch:
			if !ok {
				return
			}
			beforeWrite()
			fmt.Fprintf(w, "data: %s\n\n", ev.JSON())
		}
		fl.Flush()
	}
}

// Serve runs the API on ln until ctx ends, under httpcap's caps: no
// accept error stops it, and a connection flood sheds connections instead
// of locking the token holder out.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener, token string) error {
	srv := httpcap.NewServer(d.Handler(token), d.opts.MaxConns, d.logw)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = srv.Close()
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Headers by which a client of the API says what it is and who runs it;
// recorded with its commands. The token is what authorizes: these only
// describe.
const (
	HeaderSurface = "X-Ralph-Surface"
	HeaderUser    = "X-Ralph-User"
)

// apiWho is who asks through the API: `ralph task` says it is the CLI,
// anything else is the API; neither can pass for another surface.
func apiWho(r *http.Request) fleet.Who {
	who := fleet.Who{Surface: fleet.SurfaceAPI}
	if fleet.Surface(r.Header.Get(HeaderSurface)) == fleet.SurfaceCLI {
		who.Surface = fleet.SurfaceCLI
	}
	who.User = cleanUser(r.Header.Get(HeaderUser))
	return who
}

// cleanUser keeps a user name printable and short: it is shown to people.
func cleanUser(u string) string {
	var b strings.Builder
	for _, r := range u {
		if b.Len() >= 64 {
			break
		}
		if r > ' ' && r != 0x7f && r != ':' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// filterOf reads the history's filters from a query: session, state,
// origin, since (a duration back from now, or a date).
func (d *Daemon) filterOf(q url.Values) (TaskFilter, error) {
	f := TaskFilter{Session: q.Get("session"), State: fleet.State(q.Get("state")), Origin: q.Get("origin")}
	if f.State != "" && !f.State.Valid() {
		return f, fmt.Errorf("state: %q is not a task state (queued, running, waiting, halted, done, cancelled)", f.State)
	}
	if f.Origin != "" && !validOrigin(f.Origin) {
		return f, fmt.Errorf("origin: %q is not one of %s", f.Origin, strings.Join(Origins, ", "))
	}
	var err error
	f.Since, err = ParseSince(q.Get("since"), d.opts.Now())
	return f, err
}
