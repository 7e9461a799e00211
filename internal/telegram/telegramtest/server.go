// Package telegramtest is a Telegram Bot API server for tests, on
// 127.0.0.1. It speaks the real wire format — methods under
// /bot<TOKEN>/<method>, parameters as a query string, a form, multipart
// form data or JSON, replies {"ok":true,"result":…} or {"ok":false,
// "error_code":…,"description":…} — and keeps what a test needs to look at:
// the messages the bot sent, its answers to button presses, the offsets it
// confirmed. A test injects updates (a person's message, a reply, a button
// press), and can make the next calls fail with a 500 or a 429 with
// retry_after.
//
// It is written from the Bot API's documentation, independently of the
// client library ralph uses, so the two check each other.
package telegramtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BotUsername is the bot's name in getMe.
const BotUsername = "ralph_fake_bot"

// Message is one message the bot sent or edited.
type Message struct {
	Method     string // sendMessage or editMessageText
	ChatID     int64
	ThreadID   int
	MessageID  int
	Text       string
	ReplyTo    int  // the message it replies to (sendMessage)
	ForceReply bool // it asks the person to reply (reply_markup force_reply)
	Buttons    []Button
}

// Button is one inline keyboard button.
type Button struct{ Text, Data string }

// CallbackAnswer is one answerCallbackQuery.
type CallbackAnswer struct{ ID, Text string }

type failure struct {
	method     string // "" any
	code       int
	retryAfter int
}

type update struct {
	id  int64
	raw json.RawMessage
}

// Server is the fake Bot API.
type Server struct {
	Token string
	URL   string // the API base, as TELEGRAM_API_URL

	srv *httptest.Server

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced when updates arrive
	updates    []update
	nextUpdate int64
	confirmed  int64 // updates up to this id are gone (getUpdates offsets)
	offsets    []int64
	nextMsg    int
	messages   map[int]*Message // by message id
	sent       []Message        // in order, edits too
	answers    []CallbackAnswer
	callbacks  map[string]bool // open callback query ids
	calls      map[string]int
	fails      []failure
	hookURL    string
	hookSecret string
	hookQueue  chan update
}

var tokenShape = regexp.MustCompile(`^[0-9]+:[A-Za-z0-9_-]+$`)

// New starts a server for a bot with token ("<digits>:<secret>").
func New(token string) *Server {
	s := &Server{Token: token, changed: make(chan struct{}), nextUpdate: 100, nextMsg: 1000,
		messages: map[int]*Message{}, callbacks: map[string]bool{}, calls: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve)) // binds 127.0.0.1
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.hookQueue != nil {
		close(s.hookQueue)
		s.hookQueue = nil
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	tok, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || method == "" {
		reply(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	if tok != s.Token {
		if tokenShape.MatchString(tok) {
			reply(w, http.StatusUnauthorized, "Unauthorized", 0)
		} else {
			reply(w, http.StatusNotFound, "Not Found", 0)
		}
		return
	}
	p, err := params(r)
	if err != nil {
		reply(w, http.StatusBadRequest, "Bad Request: "+err.Error(), 0)
		return
	}
	s.mu.Lock()
	s.calls[method]++
	for i, f := range s.fails {
		if f.method == "" || strings.EqualFold(f.method, method) {
			s.fails = append(s.fails[:i], s.fails[i+1:]...)
			s.mu.Unlock()
			if f.code == http.StatusTooManyRequests {
				reply(w, f.code, fmt.Sprintf("Too Many Requests: retry after %d", f.retryAfter), f.retryAfter)
			} else {
				reply(w, f.code, http.StatusText(f.code), 0)
			}
			return
		}
	}
	s.mu.Unlock()
	var result any
	code, desc := 0, ""
	switch strings.ToLower(method) {
	case "getme":
		id, _, _ := strings.Cut(s.Token, ":")
		n, _ := strconv.ParseInt(id, 10, 64)
		result = map[string]any{"id": n, "is_bot": true, "first_name": "ralph", "username": BotUsername}
	case "getupdates":
		result, code, desc = s.getUpdates(r.Context(), p)
	case "sendmessage":
		result, code, desc = s.sendMessage(p)
	case "editmessagetext":
		result, code, desc = s.editMessageText(p)
	case "answercallbackquery":
		result, code, desc = s.answerCallback(p)
	case "setwebhook":
		result, code, desc = s.setWebhook(p)
	case "deletewebhook":
		s.mu.Lock()
		s.hookURL, s.hookSecret = "", ""
		s.mu.Unlock()
		result = true
	case "getwebhookinfo":
		s.mu.Lock()
		result = map[string]any{"url": s.hookURL, "has_custom_certificate": false, "pending_update_count": 0}
		s.mu.Unlock()
	default:
		code, desc = http.StatusNotFound, "Not Found"
	}
	if code != 0 {
		reply(w, code, desc, 0)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func reply(w http.ResponseWriter, code int, desc string, retryAfter int) {
	body := map[string]any{"ok": false, "error_code": code, "description": desc}
	if retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// params reads a method's parameters from the query string and the body,
// whatever its encoding; JSON values that are not strings keep their JSON
// text (as a form would carry a reply_markup).
func params(r *http.Request) (map[string]string, error) {
	p := map[string]string{}
	for k, v := range r.URL.Query() {
		p[k] = v[0]
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var m map[string]json.RawMessage
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return nil, err
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			if err := json.Unmarshal(body, &m); err != nil {
				return nil, fmt.Errorf("can't parse JSON object")
			}
		}
		for k, raw := range m {
			var str string
			if json.Unmarshal(raw, &str) == nil {
				p[k] = str
			} else {
				p[k] = string(raw)
			}
		}
	case "application/x-www-form-urlencoded", "multipart/form-data":
		// A method without parameters may come as an empty multipart
		// body, which the Bot API takes.
		if err := r.ParseMultipartForm(1 << 20); err != nil && err != http.ErrNotMultipart && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if r.PostForm == nil {
			_ = r.ParseForm()
		}
		for k, v := range r.PostForm {
			p[k] = v[0]
		}
	}
	return p, nil
}

func (s *Server) getUpdates(ctx context.Context, p map[string]string) (any, int, string) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	timeout, _ := strconv.Atoi(p["timeout"])
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		if s.hookURL != "" {
			s.mu.Unlock()
			return nil, http.StatusConflict, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
		}
		s.offsets = append(s.offsets, offset)
		if offset > 0 && offset-1 > s.confirmed {
			s.confirmed = offset - 1
		}
		out := []json.RawMessage{}
		for _, u := range s.updates {
			if u.id > s.confirmed && u.id >= offset && len(out) < limit {
				out = append(out, u.raw)
			}
		}
		changed := s.changed
		s.mu.Unlock()
		wait := time.Until(deadline)
		if len(out) > 0 || wait <= 0 {
			return out, 0, ""
		}
		t := time.NewTimer(wait)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return out, 0, ""
		}
		t.Stop()
	}
}

func (s *Server) sendMessage(p map[string]string) (any, int, string) {
	chat, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil {
		return nil, http.StatusBadRequest, "Bad Request: chat not found"
	}
	text := p["text"]
	switch n := utf16Len(text); {
	case strings.TrimSpace(text) == "":
		return nil, http.StatusBadRequest, "Bad Request: message text is empty"
	case n > 4096:
		return nil, http.StatusBadRequest, "Bad Request: message is too long"
	}
	m := Message{Method: "sendMessage", ChatID: chat, Text: text}
	m.ThreadID, _ = strconv.Atoi(p["message_thread_id"])
	m.ReplyTo, _ = strconv.Atoi(p["reply_to_message_id"])
	if rp := p["reply_parameters"]; rp != "" {
		var v struct {
			MessageID int `json:"message_id"`
		}
		if json.Unmarshal([]byte(rp), &v) != nil {
			return nil, http.StatusBadRequest, "Bad Request: can't parse reply parameters JSON object"
		}
		m.ReplyTo = v.MessageID
	}
	if err := m.markup(p["reply_markup"]); err != nil {
		return nil, http.StatusBadRequest, "Bad Request: can't parse reply keyboard markup JSON object"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg++
	m.MessageID = s.nextMsg
	s.messages[m.MessageID] = &m
	s.sent = append(s.sent, m)
	return s.messageJSON(m), 0, ""
}

func (s *Server) editMessageText(p map[string]string) (any, int, string) {
	id, _ := strconv.Atoi(p["message_id"])
	chat, _ := strconv.ParseInt(p["chat_id"], 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.messages[id]
	switch {
	case old == nil || old.ChatID != chat:
		return nil, http.StatusBadRequest, "Bad Request: message to edit not found"
	case strings.TrimSpace(p["text"]) == "":
		return nil, http.StatusBadRequest, "Bad Request: message text is empty"
	}
	m := Message{Method: "editMessageText", ChatID: chat, MessageID: id, Text: p["text"], ThreadID: old.ThreadID}
	if err := m.markup(p["reply_markup"]); err != nil {
		return nil, http.StatusBadRequest, "Bad Request: can't parse reply keyboard markup JSON object"
	}
	if m.Text == old.Text && len(m.Buttons) == len(old.Buttons) {
		return nil, http.StatusBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	}
	*old = m
	s.sent = append(s.sent, m)
	return s.messageJSON(m), 0, ""
}

func (m *Message) markup(raw string) error {
	if raw == "" {
		return nil
	}
	var v struct {
		ForceReply     bool `json:"force_reply"`
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return err
	}
	m.ForceReply = v.ForceReply
	for _, row := range v.InlineKeyboard {
		for _, b := range row {
			if len(b.CallbackData) > 64 {
				return fmt.Errorf("callback data too long")
			}
			m.Buttons = append(m.Buttons, Button{Text: b.Text, Data: b.CallbackData})
		}
	}
	return nil
}

func (s *Server) answerCallback(p map[string]string) (any, int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := p["callback_query_id"]
	if !s.callbacks[id] {
		return nil, http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid"
	}
	delete(s.callbacks, id)
	s.answers = append(s.answers, CallbackAnswer{ID: id, Text: p["text"]})
	return true, 0, ""
}

func (s *Server) setWebhook(p map[string]string) (any, int, string) {
	u, err := url.Parse(p["url"])
	if err != nil || u.Host == "" {
		return nil, http.StatusBadRequest, "Bad Request: bad webhook: invalid URL"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hookURL, s.hookSecret = p["url"], p["secret_token"]
	if s.hookQueue == nil {
		s.hookQueue = make(chan update, 1000)
		go s.deliver(s.hookQueue)
	}
	return true, 0, ""
}

// messageJSON is m as the Bot API returns a message; s.mu is held.
func (s *Server) messageJSON(m Message) map[string]any {
	id, _, _ := strings.Cut(s.Token, ":")
	n, _ := strconv.ParseInt(id, 10, 64)
	out := map[string]any{"message_id": m.MessageID, "date": time.Now().Unix(), "text": m.Text,
		"chat": chatJSON(m.ChatID), "from": map[string]any{"id": n, "is_bot": true, "first_name": "ralph", "username": BotUsername}}
	if m.ThreadID != 0 {
		out["message_thread_id"] = m.ThreadID
	}
	return out
}

func chatJSON(id int64) map[string]any {
	if id < 0 {
		return map[string]any{"id": id, "type": "supergroup", "title": "the team"}
	}
	return map[string]any{"id": id, "type": "private", "first_name": "someone"}
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
