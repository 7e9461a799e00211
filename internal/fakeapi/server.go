package fakeapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBody bounds what the fake reads of a request; Claude Code's requests
// are a few hundred kilobytes, long resumed sessions a few megabytes.
const maxBody = 64 << 20

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give a client, e.g. as ANTHROPIC_BASE_URL.
	URL string

	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
	srv    *http.Server
	stop   context.CancelFunc
	served chan struct{}
	once   sync.Once
	err    error

	mu       sync.Mutex
	script   Script
	next     int // the iteration the next new prompt gets (sequential mode)
	requests []Request
	problems []string
}

// Option configures a Server.
type Option func(*Server)

// WithClock sets the clock used for UsageLimit.ResetsIn (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(s *Server) { s.now = now }
}

// WithSleep replaces how a scripted Turn.Delay is waited out; tests record
// the calls instead of sleeping. sleep must return early with an error when
// ctx ends (the client went away or the fake is closing).
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(s *Server) { s.sleep = sleep }
}

// New validates script and starts serving it on a fresh 127.0.0.1 port.
func New(script Script, opts ...Option) (*Server, error) {
	if err := script.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeapi: listen: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{
		URL:    "http://" + ln.Addr().String(),
		script: script,
		now:    time.Now,
		sleep:  sleepCtx,
		stop:   stop,
		served: make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		// Cancelled by Close so that a scripted delay never outlives the fake.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // always ErrServerClosed after Close
	}()
	return s, nil
}

// TB is the part of testing.TB that Start needs; taking an interface keeps
// package testing out of the ralph binary.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Start is New for tests: it fails the test on error and closes the fake
// when the test ends.
func Start(t TB, script Script, opts ...Option) *Server {
	t.Helper()
	s, err := New(script, opts...)
	if err != nil {
		t.Fatalf("fakeapi: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Close stops the fake, aborting pending delays and open connections.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.stop()
		s.err = s.srv.Close()
		<-s.served
	})
	return s.err
}

// Play replaces the script: the next plain prompt starts its first
// iteration. A test plays the model one phase of its story at a time (what
// the agent does once a reviewer or a check has spoken) without counting
// the calls each earlier phase took. A call in progress when it is
// replaced continues in the new script, so play between calls.
func (s *Server) Play(script Script) error {
	if err := script.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	s.script, s.next = script, 0
	s.mu.Unlock()
	return nil
}

// current is the script being played.
func (s *Server) current() Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.script
}

// Requests returns a copy of every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MessageRequests returns the model calls that decoded, whatever their
// protocol (see Request.Messages).
func (s *Server) MessageRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Messages != nil {
			out = append(out, r)
		}
	}
	return out
}

// Problems lists what the fake could not answer from the script (script
// exhausted, undecodable body), so a test can fail on them instead of on
// a puzzling agent error.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

func (s *Server) problem(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.problems = append(s.problems, msg)
	s.mu.Unlock()
	return msg
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := Request{
		Time:      s.now(),
		Method:    r.Method,
		Path:      r.URL.Path,
		Query:     r.URL.RawQuery,
		Header:    r.Header.Clone(),
		Body:      body,
		Iteration: -1,
		Turn:      -1,
	}
	if err != nil {
		s.record(rec)
		writeError(w, &ErrorReply{Status: 400, Message: "fakeapi: read body: " + err.Error()}, s.now())
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, r, rec)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		s.responses(w, r, rec)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/"):
		s.gemini(w, r, rec)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.record(rec)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, estimateTokens(len(body)))
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && (r.URL.Path == "/" || r.URL.Path == "/api/hello")):
		// Connectivity probes; Claude Code fires HEAD / and HEAD /api/hello.
		s.record(rec)
		w.WriteHeader(http.StatusOK)
	default:
		s.record(rec)
		writeError(w, &ErrorReply{Status: 404, Message: "fakeapi: no route for " + r.Method + " " + r.URL.Path}, s.now())
	}
}

func (s *Server) record(rec Request) {
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request, rec Request) {
	var mr MessagesRequest
	if err := json.Unmarshal(rec.Body, &mr); err != nil {
		s.record(rec)
		msg := s.problem("undecodable messages request: %v", err)
		writeError(w, &ErrorReply{Status: 400, Message: "fakeapi: " + msg}, s.now())
		return
	}
	rec.Messages = &mr
	iter, turn := s.choose(&mr)
	rec.Iteration, rec.Turn = iter, turn
	s.record(rec)

	t, ok := s.turn(iter, turn)
	if !ok {
		msg := s.problem("script has no reply for iteration %d turn %d", iter, turn)
		writeError(w, &ErrorReply{Status: 500, Message: "fakeapi: " + msg}, s.now())
		return
	}
	if t.Delay > 0 {
		if err := s.sleep(r.Context(), time.Duration(t.Delay)); err != nil {
			return // nobody is listening any more
		}
	}
	for k, v := range t.Headers {
		w.Header().Set(k, v)
	}
	if t.Error != nil {
		writeError(w, t.Error, s.now())
		return
	}
	model := s.current().Model
	if model == "" {
		model = mr.Model
	}
	reply := buildReply(t, iter, turn, model, &mr, len(rec.Body))
	if mr.Stream {
		writeStream(w, reply)
	} else {
		writeJSON(w, reply)
	}
}

// turn returns the scripted step; false when the script has none.
func (s *Server) turn(iter, turn int) (Turn, bool) {
	its := s.current().Iterations
	if iter < 0 || iter >= len(its) || turn < 0 || turn >= len(its[iter].Turns) {
		return Turn{}, false
	}
	return its[iter].Turns[turn], true
}

// choose picks the script step for a request; see Script for the rules.
func (s *Server) choose(mr *MessagesRequest) (iter, turn int) {
	conv := mr.Conversation()
	last := len(conv) - 1
	if last >= 0 && conv[last].Role == "user" && conv[last].Content.HasToolResult() {
		if i, t, ok := ownToolUse(conv[last].Content); ok {
			return i, t + 1
		}
		// Not our tool ids (e.g. the fake was restarted): count instead.
		return s.clamp(stateless(conv))
	}
	if s.current().Mode == ModeStateless {
		return s.clamp(stateless(conv))
	}
	s.mu.Lock()
	iter = s.next
	s.next++
	s.mu.Unlock()
	return s.clamp(iter, 0)
}

// clamp maps iterations past the end onto the last one when the script
// repeats it, so that the tool ids the fake hands out name a real step.
func (s *Server) clamp(iter, turn int) (int, int) {
	script := s.current()
	if n := len(script.Iterations); script.RepeatLast && n > 0 && iter >= n {
		iter = n - 1
	}
	return iter, turn
}

// stateless derives the step from the request alone: the iteration is the
// number of plain prompts minus one, the turn the number of assistant
// messages after the last one.
func stateless(conv []Message) (iter, turn int) {
	prompts, inPrompt := 0, false
	for _, m := range conv {
		switch {
		case m.Role == "user" && !m.Content.HasToolResult():
			if !inPrompt {
				prompts++
				turn = 0
			}
			inPrompt = true
		case m.Role == "assistant":
			turn++
			inPrompt = false
		default:
			inPrompt = false
		}
	}
	return max(prompts-1, 0), turn
}

// Tool use ids carry the step that issued them, so that the request
// carrying the results can be traced back to its iteration without any
// per-client state: toolu_i<iteration>t<turn>b<block>_<random>.
var ownID = regexp.MustCompile(`^toolu_i(\d+)t(\d+)b\d+_`)

func toolUseID(iter, turn, block int) string {
	return fmt.Sprintf("toolu_i%dt%db%d_%s", iter, turn, block, randomHex(8))
}

func ownToolUse(c Content) (iter, turn int, ok bool) {
	for _, b := range c.ToolResults() {
		m := ownID.FindStringSubmatch(b.ToolUseID)
		if m == nil {
			continue
		}
		i, err1 := strconv.Atoi(m[1])
		t, err2 := strconv.Atoi(m[2])
		if err := errors.Join(err1, err2); err == nil {
			return i, t, true
		}
	}
	return 0, 0, false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails on supported platforms
	return hex.EncodeToString(b)
}

// estimateTokens uses the usual four bytes per token so that usage and cost
// figures grow with the conversation the way real ones do.
func estimateTokens(bytes int) int {
	return max(bytes/4, 1)
}
