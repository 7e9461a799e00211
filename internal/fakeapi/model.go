package fakeapi

import (
	"net/http"
	"strings"
	"time"
)

// The Messages API handler in server.go is the original; the other wire
// protocols translate their requests into a MessagesRequest so that one
// Script, one way of choosing a step and one request log serve them all.
// Only how a reply or an error is put on the wire differs.

// wire writes replies and errors in one protocol's format.
type wire interface {
	reply(w http.ResponseWriter, r reply)
	error(w http.ResponseWriter, e *ErrorReply, now time.Time)
}

// serveModel answers a model call whose body decoded into mr (nil with
// decodeErr when it did not).
func (s *Server) serveModel(w http.ResponseWriter, r *http.Request, rec Request, mr *MessagesRequest, decodeErr error, out wire) {
	if decodeErr != nil {
		s.record(rec)
		msg := s.problem("undecodable request to %s: %v", rec.Path, decodeErr)
		out.error(w, &ErrorReply{Status: 400, Message: "fakeapi: " + msg}, s.now())
		return
	}
	rec.Messages = mr
	iter, turn := s.choose(mr)
	rec.Iteration, rec.Turn = iter, turn
	s.record(rec)

	t, ok := s.turn(iter, turn)
	if !ok {
		msg := s.problem("script has no reply for iteration %d turn %d", iter, turn)
		out.error(w, &ErrorReply{Status: 500, Message: "fakeapi: " + msg}, s.now())
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
		out.error(w, t.Error, s.now())
		return
	}
	model := s.current().Model
	if model == "" {
		model = mr.Model
	}
	out.reply(w, buildReply(t, iter, turn, model, mr, len(rec.Body)))
}

// RequestsTo returns the requests whose path starts with pathPrefix, oldest
// first: "/v1/responses" for Codex, "/v1beta/models/" for Gemini CLI.
func (s *Server) RequestsTo(pathPrefix string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Path, pathPrefix) {
			out = append(out, r)
		}
	}
	return out
}

// resetAt is when a usage limit ends, in epoch seconds.
func (u *UsageLimit) resetAt(now time.Time) int64 {
	if u.ResetsAt != 0 {
		return u.ResetsAt
	}
	return now.Add(time.Duration(u.ResetsIn)).Unix()
}

// tokens maps the Anthropic-style usage of a turn, where input_tokens
// excludes cached input, onto the OpenAI and Gemini convention, where the
// input count includes it and the cached part is reported beside it.
func (u Usage) tokens() (input, cached, output int) {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens, u.CacheReadInputTokens, u.OutputTokens
}
