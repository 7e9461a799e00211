package telegram

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"ralph/internal/fleet"
	"ralph/internal/serve"
	"ralph/internal/telegram/telegramtest"
)

// fakeFleet is a daemon in memory: enough of serve's verbs to see what
// the bot asks of it.
type fakeFleet struct {
	mu       sync.Mutex
	sessions []serve.Session
	tasks    map[string]*serve.TaskView
	replyTo  map[string]string // task id → reply address
	calls    []string
	seq      int
	who      []fleet.Who // who gave each command
}

func newFakeFleet(names ...string) *fakeFleet {
	f := &fakeFleet{tasks: map[string]*serve.TaskView{}, replyTo: map[string]string{}}
	for _, n := range names {
		f.sessions = append(f.sessions, serve.Session{Name: n, Dir: "/src/" + n})
	}
	return f
}

func (f *fakeFleet) record(format string, a ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
}

func (f *fakeFleet) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeFleet) known(s string) error {
	for _, x := range f.sessions {
		if x.Name == s {
			return nil
		}
	}
	return &fleet.Error{Code: fleet.NotFound, Msg: fmt.Sprintf("unknown session %q; known sessions: a, b", s)}
}

func (f *fakeFleet) cur(s string) (*serve.TaskView, error) {
	if err := f.known(s); err != nil {
		return nil, err
	}
	t := f.tasks[s]
	if t == nil || t.State.Finished() {
		return nil, &fleet.Error{Code: fleet.NotFound, Msg: fmt.Sprintf("session %s has no task; start one (ralph task start %s TITLE…)", s, s)}
	}
	return t, nil
}

func (f *fakeFleet) StartFrom(_ context.Context, s, title, origin, replyTo string) (serve.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("start %s %q %s %s", s, title, origin, replyTo)
	if err := f.known(s); err != nil {
		return serve.TaskView{}, err
	}
	if t := f.tasks[s]; t != nil && !t.State.Finished() {
		return serve.TaskView{}, &fleet.Error{Code: fleet.Conflict, Msg: "session " + s + " is busy"}
	}
	f.seq++
	t := &serve.TaskView{ID: fmt.Sprintf("t%d", f.seq), Session: s, Title: title, Origin: origin, State: fleet.Waiting,
		CircuitBreaker: serve.BreakerView{State: "CLOSED"}}
	f.tasks[s], f.replyTo[t.ID] = t, replyTo
	return *t, nil
}

func (f *fakeFleet) verb(name, s string, fn func(*serve.TaskView) error) (serve.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("%s %s", name, s)
	t, err := f.cur(s)
	if err != nil {
		return serve.TaskView{}, err
	}
	if fn != nil {
		if err := fn(t); err != nil {
			return serve.TaskView{}, err
		}
	}
	return *t, nil
}

func (f *fakeFleet) Loop(s string, n int) (serve.TaskView, error) {
	return f.verb(fmt.Sprintf("loop(%d)", n), s, func(t *serve.TaskView) error {
		if n == 0 {
			n = serve.DefaultMaxLoops
		}
		t.State, t.MaxLoops = fleet.Running, t.LoopCount+n
		return nil
	})
}
func (f *fakeFleet) Status(s string) (serve.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.known(s); err != nil {
		return serve.TaskView{}, err
	}
	if t := f.tasks[s]; t != nil {
		return *t, nil
	}
	return serve.TaskView{}, &fleet.Error{Code: fleet.NotFound, Msg: "session " + s + " has no task yet"}
}
func (f *fakeFleet) List() ([]serve.TaskView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []serve.TaskView
	for _, s := range f.sessions {
		if t := f.tasks[s.Name]; t != nil {
			out = append(out, *t)
		}
	}
	return out, nil
}
func (f *fakeFleet) Stop(s string) (serve.TaskView, error) {
	return f.verb("stop", s, func(t *serve.TaskView) error { t.State = fleet.Waiting; return nil })
}
func (f *fakeFleet) Cancel(s string) (serve.TaskView, error) {
	return f.verb("cancel", s, func(t *serve.TaskView) error { t.State = fleet.Cancelled; return nil })
}
func (f *fakeFleet) Reset(s string) (serve.TaskView, error) {
	return f.verb("reset", s, func(t *serve.TaskView) error { t.State, t.CircuitBreaker.State = fleet.Waiting, "CLOSED"; return nil })
}
func (f *fakeFleet) Answer(s, text string) (serve.TaskView, error) {
	return f.verb("answer "+text+" to", s, func(t *serve.TaskView) error {
		if len(t.Questions) == 0 {
			return &fleet.Error{Code: fleet.Conflict, Msg: "no question"}
		}
		t.Questions, t.State = nil, fleet.Queued
		return nil
	})
}
func (f *fakeFleet) Pause(s string) (serve.TaskView, error) {
	return f.verb("pause", s, nil)
}
func (f *fakeFleet) Resume(s string) (serve.TaskView, error) {
	return f.verb("resume", s, nil)
}

// Do is the daemon's one way in: the fake's verbs, with who asked kept.
func (f *fakeFleet) Do(ctx context.Context, c fleet.Command) (serve.TaskView, error) {
	if err := c.Validate(); err != nil {
		return serve.TaskView{}, err
	}
	f.mu.Lock()
	f.who = append(f.who, c.Who)
	f.mu.Unlock()
	switch c.Verb {
	case fleet.Start, fleet.StartLoop:
		v, err := f.StartFrom(ctx, c.Session, c.Title, c.Origin, c.ReplyTo)
		if err == nil && c.Verb == fleet.StartLoop {
			return f.Loop(c.Session, c.MaxLoops)
		}
		return v, err
	case fleet.Loop:
		return f.Loop(c.Session, c.MaxLoops)
	case fleet.Stop:
		return f.Stop(c.Session)
	case fleet.Cancel:
		return f.Cancel(c.Session)
	case fleet.Reset:
		return f.Reset(c.Session)
	case fleet.Retry:
		if _, err := f.Reset(c.Session); err != nil {
			return serve.TaskView{}, err
		}
		return f.Loop(c.Session, c.MaxLoops)
	case fleet.Answer:
		return f.Answer(c.Session, c.Text)
	case fleet.Pause:
		return f.Pause(c.Session)
	case fleet.Resume:
		return f.Resume(c.Session)
	}
	return serve.TaskView{}, fmt.Errorf("fake fleet: %s", c.Verb)
}

func (f *fakeFleet) Sessions() ([]serve.Session, error) { return f.sessions, nil }
func (f *fakeFleet) Watchdog() []serve.WatchStatus      { return nil }

// set changes a task as the daemon would.
func (f *fakeFleet) set(s string, fn func(*serve.TaskView)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.tasks[s])
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rig is a bot on a fake Bot API and a fake fleet.
type rig struct {
	t      *testing.T
	api    *telegramtest.Server
	fleet  *fakeFleet
	bot    *Bot
	log    *syncBuf
	store  string
	sleeps *[]time.Duration
	stop   func()
}

const testToken = "4242:fake-token-SECRET-value"

func newRig(t *testing.T, edit func(*Config)) *rig {
	t.Helper()
	api := telegramtest.New(testToken)
	t.Cleanup(api.Close)
	r := &rig{t: t, api: api, fleet: newFakeFleet("5", "a"), log: &syncBuf{}, store: filepath.Join(t.TempDir(), "telegram.db"), sleeps: &[]time.Duration{}}
	cfg := Config{Token: testToken, AllowedChats: []int64{42, -100}, APIURL: api.URL}
	if edit != nil {
		edit(&cfg)
	}
	r.start(cfg)
	return r
}

func (r *rig) start(cfg Config) {
	r.t.Helper()
	var mu sync.Mutex
	r.bot = New(cfg, Options{Log: r.log, PollTimeout: 2 * time.Second, Sleep: func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*r.sleeps = append(*r.sleeps, d)
		mu.Unlock()
		return ctx.Err()
	}})
	if err := r.bot.Open(r.store); err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.bot.Run(ctx, r.fleet); close(done) }()
	r.stop = func() {
		cancel()
		<-done
		r.bot.Close()
	}
	r.t.Cleanup(func() {
		if r.stop != nil {
			r.stop()
		}
		if r.t.Failed() {
			r.t.Logf("bot log:\n%s", r.log.String())
		}
	})
}

func (r *rig) restart(cfg Config) {
	r.stop()
	r.stop = nil
	r.start(cfg)
}

// said waits for a message after skip that contains sub.
func (r *rig) said(skip int, sub string) telegramtest.Message {
	r.t.Helper()
	m, ok := r.api.WaitSent(skip, 10*time.Second, func(m telegramtest.Message) bool { return bytes.Contains([]byte(m.Text), []byte(sub)) })
	if !ok {
		r.t.Fatalf("the bot never said %q; it said %+v", sub, r.api.Sent())
	}
	return m
}
