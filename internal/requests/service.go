package requests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/github"
	"ralph/internal/redact"
	"ralph/internal/serve"
)

// Daemon is what requests ask of `ralph serve` (declared here, by its
// consumer; *serve.Daemon implements it).
type Daemon interface {
	AddSession(serve.Session) error
	// Do carries out a command: the one way requests change the fleet,
	// as every surface does.
	Do(ctx context.Context, c fleet.Command) (serve.TaskView, error)
	Status(session string) (serve.TaskView, error)
	SetPRURL(session, url string, draft bool) error
	// Follow moves a task between loops to where its pull request
	// leaves it: waiting for review, done (merged), cancelled (closed).
	Follow(session string, state fleet.State, message string) error
}

// Options configure a Service.
type Options struct {
	// Root is where clones and worktrees go (RALPH_HOME/requests).
	Root string
	Log  io.Writer
	// HTTPClient talks to GitHub and Slack (tests: nil).
	HTTPClient *http.Client
	Now        func() time.Time
}

// Service runs requests: intake, the daemon's verbs, the outcomes.
type Service struct {
	cfg   Config
	opts  Options
	store *Store
	hub   *hub
	ws    workspace
	slack *slackSide

	d      Daemon
	wakeup chan struct{}

	mu      sync.Mutex
	pending map[string]bool   // request keys to look at
	repos   map[string]repoAt // clone URL and base, by repository
	shown   map[string]string // the status text last written, by request
	said    map[string]bool   // log lines said once

	// gateMu orders the writes of a request's posted gate items: the
	// requests' loop and Slack's button presses both make them.
	gateMu sync.Mutex

	// convFor, when set (tests), is where every request talks back.
	convFor func(Request) conversation
}

// once is true the first time it is asked about key.
func (s *Service) once(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.said[key] {
		return false
	}
	s.said[key] = true
	return true
}

type repoAt struct{ cloneURL, base string }

// New builds the service from its settings.
func New(cfg Config, opts Options) (*Service, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	redact.Add(cfg.GitHubToken, cfg.WebhookSecret, cfg.Slack.BotToken, cfg.Slack.AppToken, cfg.Slack.SigningSecret)
	h, err := newHub(cfg.GitHubAPIURL, cfg.GitHubToken, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, opts: opts, hub: h, ws: workspace{root: opts.Root, git: gitRepo{token: cfg.GitHubToken}},
		wakeup: make(chan struct{}, 1), pending: map[string]bool{}, repos: map[string]repoAt{}, shown: map[string]string{}, said: map[string]bool{}}
	if cfg.SlackOn() {
		s.slack = newSlackSide(cfg.Slack, opts.HTTPClient, func() *Store { return s.store })
	}
	return s, nil
}

// Open opens the request store (requests.db beside the daemon's).
func (s *Service) Open(path string) error {
	st, err := OpenStore(path)
	if err != nil {
		return err
	}
	s.store = st
	return nil
}

// Close closes the store.
func (s *Service) Close() error {
	if s.store == nil {
		return nil
	}
	return s.store.Close()
}

func (s *Service) logf(format string, a ...any) {
	fmt.Fprintf(s.opts.Log, "%s requests: %s\n", s.opts.Now().UTC().Format(time.RFC3339), redact.String(fmt.Sprintf(format, a...)))
}

// Channel implements serve.Named: the daemon's outbox records the
// notices handed to the requests under this name.
func (s *Service) Channel() string { return "requests" }

// Notify implements serve.Notifier: a notice about a request's task wakes
// the request up, never blocking. What the issue or thread is told then
// follows from the request's recorded phase and its task's state, not
// from the notice: a notice handed on twice posts nothing twice.
func (s *Service) Notify(n serve.Notice) {
	if (n.Origin == "github" || n.Origin == "slack") && n.ReplyTo != "" {
		s.poke(n.ReplyTo)
	}
}

func (s *Service) poke(key string) {
	s.mu.Lock()
	s.pending[key] = true
	s.mu.Unlock()
	select {
	case s.wakeup <- struct{}{}:
	default:
	}
}

// reconcileEvery is how often every request is looked at even without a
// notice: a notice lost in a crash costs at most this much delay.
const reconcileEvery = 30 * time.Second

// Run serves requests until ctx ends: it polls GitHub (when set), listens
// to Slack (Socket Mode, when set) and acts on what comes in and on the
// daemon's notices, one request at a time.
func (s *Service) Run(ctx context.Context, d Daemon) {
	s.d = d
	var wg sync.WaitGroup
	if (s.cfg.On() || s.cfg.SlackOn()) && s.cfg.Poll > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); s.pollLoop(ctx) }()
	}
	if s.slack != nil && s.cfg.Slack.AppToken != "" {
		wg.Add(1)
		go func() { defer wg.Done(); s.socketMode(ctx) }()
	}
	s.pokeAll()
	tick := time.NewTicker(reconcileEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
			s.pokeAll()
		case <-s.wakeup:
		}
		for {
			key := s.next()
			if key == "" || ctx.Err() != nil {
				break
			}
			if err := s.process(ctx, key); err != nil && ctx.Err() == nil {
				s.logf("%s: %v", key, err)
			}
		}
	}
}

func (s *Service) pokeAll() {
	all, err := s.store.All()
	if err != nil {
		s.logf("%v", err)
		return
	}
	for _, r := range all {
		s.poke(r.Key)
	}
}

func (s *Service) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.pending {
		delete(s.pending, k)
		return k
	}
	return ""
}

// repo is where a repository is cloned from and its base branch.
func (s *Service) repo(ctx context.Context, name string) (repoAt, error) {
	s.mu.Lock()
	at, ok := s.repos[name]
	s.mu.Unlock()
	if ok {
		return at, nil
	}
	u, base, err := s.hub.Repo(ctx, name)
	if err != nil {
		return repoAt{}, err
	}
	at = repoAt{cloneURL: u, base: base}
	s.mu.Lock()
	s.repos[name] = at
	s.mu.Unlock()
	return at, nil
}

// process brings one request up to date: its workspace and session, what
// people said since it was last looked at (start, answer, retry), then
// what its loop came to.
func (s *Service) process(ctx context.Context, key string) error {
	r, err := s.store.Get(key)
	if err != nil {
		return err
	}
	at, err := s.repo(ctx, r.Repo)
	if err != nil {
		return err
	}
	dir, err := s.ws.ensure(ctx, r.Repo, at.cloneURL, at.base, r.Branch, r.Session)
	if err != nil {
		return err
	}
	if err := s.d.AddSession(serve.Session{Name: r.Session, Dir: dir}); err != nil {
		return err
	}
	entries, err := s.store.Entries(key)
	if err != nil {
		return err
	}
	for i, e := range entries {
		if e.Kind == kindEnd && !e.Acted && following(r) {
			if entries[i].Acted, err = s.endPR(ctx, &r, e); err != nil {
				return err
			}
		}
	}
	var fresh []Entry
	for _, e := range entries {
		if e.Kind == kindEnd {
			continue
		}
		// What the pull request brings waits while a round runs, and is
		// taken only while the request waits for review.
		if !e.Acted && (!fromPR(e) || r.PRState == prReview) {
			fresh = append(fresh, e)
		}
	}
	if len(fresh) > 0 && r.PRState == prReview && !slices.ContainsFunc(fresh, holdsWork) {
		if err := s.startRound(ctx, &r, fresh, dir, at); err != nil {
			return err
		}
	} else if len(fresh) > 0 {
		if err := s.tellDaemon(ctx, r, fresh); err != nil {
			return err
		}
		ids := make([]string, len(fresh))
		for i, e := range fresh {
			ids[i] = e.ID
		}
		if err := s.store.MarkActed(key, ids); err != nil {
			return err
		}
	}
	v, err := s.d.Status(r.Session)
	if err != nil {
		return nil // no task yet: nothing to report
	}
	return s.report(ctx, r, v, dir, at)
}

// tellDaemon turns new messages into a verb: a new task for a new request
// (or a follow-up after a finished one), an answer to pending questions, a
// resumed loop after a retry.
func (s *Service) tellDaemon(ctx context.Context, r Request, fresh []Entry) error {
	cmd := NoCommand
	var said []string
	who := fleet.Who{Surface: fleet.Surface(r.Source)}
	if !who.Surface.Valid() {
		who.Surface = fleet.SurfaceGitHub
	}
	for _, e := range fresh {
		p := Parse(e.Body)
		if p.Cmd.Gate() {
			if err := s.gateCommand(ctx, r, e, p, fleet.Who{Surface: who.Surface, User: e.Author}); err != nil {
				return err
			}
			continue
		}
		who.User = e.Author // the last person who spoke
		if c := p.Cmd; c != NoCommand {
			cmd = c
			continue
		}
		if e.ID != "opening" {
			said = append(said, strings.TrimSpace(e.Body))
		}
	}
	v, err := s.d.Status(r.Session)
	// A call that waits for a person is a loop that runs.
	looping := err == nil && (v.State == fleet.Running || v.State == fleet.Queued || len(v.Pending) > 0)
	if verb, ok := map[Command]fleet.Verb{CmdStop: fleet.Stop, CmdCancel: fleet.Cancel, CmdPause: fleet.Pause, CmdResume: fleet.Resume}[cmd]; ok &&
		err == nil && !v.State.Finished() && (looping || cmd == CmdCancel) {
		_, err = s.d.Do(ctx, fleet.Command{Verb: verb, Session: r.Session, Who: who})
		return err
	}
	if cmd == CmdResume {
		cmd = CmdRetry // a request that is not looping resumes by a retry
	}
	switch {
	case err != nil || v.State.Finished():
		if err == nil && len(said) == 0 && cmd != CmdRetry {
			return nil // a finished request hears only a follow-up
		}
		if r.PRState == prMerged || r.PRState == prClosed {
			// Work after the pull request's end is new work: a pull
			// request of its own, followed afresh.
			r.PRState, r.Rounds, r.PRNumber, r.PRURL = "", 0, 0, ""
			if err := s.store.Update(r); err != nil {
				return err
			}
		}
		_, err = s.d.Do(ctx, fleet.Command{Verb: fleet.StartLoop, Session: r.Session, Title: fleet.ClipTitle(r.Title), Origin: r.Source,
			ReplyTo: r.Key, OriginURL: s.originURL(ctx, r), MaxLoops: s.cfg.MaxLoops, Who: who})
		return err
	case v.State == fleet.Waiting && len(v.Pending) > 0 && len(v.Questions) == 0:
		// Only tool calls wait: what was said is in the thread, for the
		// prompt of the next start; a decision is a command (gate.go).
		return nil
	case v.State == fleet.Waiting && len(v.Questions) > 0 && len(said) > 0:
		text := strings.Join(said, "\n\n")
		if _, err = s.d.Do(ctx, fleet.Command{Verb: fleet.Answer, Session: r.Session, Text: text, Who: who}); err != nil {
			return err
		}
		// The question the call waited on says who answered it.
		for _, it := range v.Pending {
			if it.Kind == "question" {
				return s.gateDone(ctx, r, v.ID, it.ID, decidedText(fleet.Command{Verb: fleet.Answer, Text: text}, it, who))
			}
		}
		return nil
	case v.State == fleet.Halted && cmd == CmdRetry, v.State == fleet.Waiting && len(v.Questions) == 0 && (cmd == CmdRetry || len(said) > 0):
		_, err = s.d.Do(ctx, fleet.Command{Verb: fleet.Retry, Session: r.Session, MaxLoops: s.cfg.MaxLoops, Who: who})
		return err
	}
	// Running, queued, or halted without a retry: what was said is in the
	// thread the prompt carries at the next start.
	return nil
}

// Root is RALPH_HOME/requests.
func Root(home string) string { return filepath.Join(home, "requests") }

// holdsWork says whether an entry is a command that stops or gives up
// the work (stop, pause, cancel) or decides what a call waits on: the
// daemon is told, and no round starts.
// A retry or resume while the pull request waits for review asks for a
// round.
func holdsWork(e Entry) bool {
	switch ParseCommand(e.Body) {
	case CmdStop, CmdPause, CmdCancel, CmdApprove, CmdDeny, CmdAnswer:
		return true
	}
	return false
}

// originURL is the page a request's task came from, for its history: the
// issue on GitHub, the thread's permalink on Slack ("" when unknown).
func (s *Service) originURL(ctx context.Context, r Request) string {
	switch {
	case r.Source == "github" && r.Repo != "" && r.Number > 0:
		return issueWebURL(s.cfg.GitHubAPIURL, r.Repo, r.Number)
	case r.Source == "slack" && s.slack != nil:
		return s.slack.permalink(ctx, r.Channel, r.Thread)
	}
	return ""
}

// issueWebURL is an issue's page on the GitHub whose API root is api ("":
// github.com; an Enterprise server's /api/v3 root is its pages' host).
func issueWebURL(api, repo string, n int) string {
	web := "https://github.com"
	if u, err := github.ParseBaseURL(api); err == nil && api != "" && u.Host != "api.github.com" {
		u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3")
		web = strings.TrimSuffix(u.String(), "/")
	}
	return fmt.Sprintf("%s/%s/issues/%d", web, repo, n)
}
