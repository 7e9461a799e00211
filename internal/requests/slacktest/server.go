// Package slacktest is a Slack Web API on 127.0.0.1 for tests: auth.test,
// chat.postMessage, chat.update, chat.postEphemeral, chat.getPermalink and
// apps.connections.open with a Socket Mode websocket it serves itself, on
// the real wire format (form or JSON bodies, Bearer tokens, {"ok":...}
// answers). It records the messages the bot writes (with their Block Kit
// buttons and edits) and injects events: signed Events API deliveries
// POSTed to a webhook, envelopes over the socket, and button presses
// (block_actions) either way.
package slacktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Options describe the workspace.
type Options struct {
	BotToken  string // xoxb-…, required for the Web API
	AppToken  string // xapp-…, for apps.connections.open
	BotUserID string // auth.test's user_id; default "UBOT"
	BotID     string // auth.test's bot_id; default "BBOT"
}

// Message is one message the bot posted, with its edits applied.
type Message struct {
	Channel, TS, ThreadTS, Text string
	Edits                       int
	// Blocks is the message's Block Kit JSON ("" without blocks), Buttons
	// the buttons in it, in order.
	Blocks  string
	Buttons []Button
	// BlockText is the text of its blocks (sections and context), one
	// line each.
	BlockText string
}

// Button is a button of a message's blocks.
type Button struct {
	ActionID, BlockID, Value, Text string
}

// Ephemeral is a message the bot showed one user only.
type Ephemeral struct {
	Channel, User, ThreadTS, Text string
}

// Server is the fake.
type Server struct {
	URL string // the Web API base: SLACK_API_URL
	Options

	srv *httptest.Server
	t   testing.TB

	mu    sync.Mutex
	msgs  []Message
	ephem []Ephemeral
	next  int64
	calls map[string]int
	conns []*websocket.Conn
	acks  map[string]bool
	wmu   sync.Mutex // one writer per socket at a time
}

// Start serves the fake until the test ends.
func Start(t testing.TB, o Options) *Server {
	if o.BotUserID == "" {
		o.BotUserID = "UBOT"
	}
	if o.BotID == "" {
		o.BotID = "BBOT"
	}
	s := &Server{Options: o, t: t, next: time.Now().Unix() * 1e6, calls: map[string]int{}, acks: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.api)
	mux.HandleFunc("/socket", s.socket)
	// Unstarted, so that s.srv is set before any handler can read it.
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.Start()
	s.URL = s.srv.URL + "/api"
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and its sockets.
func (s *Server) Close() {
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string) {
	writeJSON(w, map[string]any{"ok": false, "error": code})
}

// params reads a call's arguments: a form (as slack-go sends most calls)
// or a JSON object.
func params(r *http.Request) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		if len(bytes.TrimSpace(b)) == 0 {
			return r.URL.Query(), nil // a call without arguments
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		v := url.Values{}
		for k, x := range m {
			if str, ok := x.(string); ok {
				v.Set(k, str)
			} else {
				enc, _ := json.Marshal(x)
				v.Set(k, string(enc))
			}
		}
		return v, nil
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return r.URL.Query(), nil // a call without arguments
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.Form, nil
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	v, err := params(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = v.Get("token")
	}
	want := s.BotToken
	if method == "apps.connections.open" {
		want = s.AppToken
	}
	s.mu.Lock()
	s.calls[method]++
	s.mu.Unlock()
	if want == "" || token != want {
		fail(w, "invalid_auth")
		return
	}
	switch method {
	case "auth.test":
		writeJSON(w, map[string]any{"ok": true, "url": "https://fake.slack.com/", "team": "Fake", "user": "ralph",
			"team_id": "TFAKE", "user_id": s.BotUserID, "bot_id": s.BotID})
	case "chat.postMessage":
		if v.Get("channel") == "" || v.Get("text") == "" {
			fail(w, "no_text")
			return
		}
		s.mu.Lock()
		s.next++
		m := Message{Channel: v.Get("channel"), TS: fmt.Sprintf("%d.%06d", s.next/1e6, s.next%1e6), ThreadTS: v.Get("thread_ts"), Text: v.Get("text"),
			Blocks: v.Get("blocks")}
		m.Buttons, m.BlockText = buttons(m.Blocks)
		s.msgs = append(s.msgs, m)
		s.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS,
			"message": map[string]any{"text": m.Text, "ts": m.TS, "thread_ts": m.ThreadTS, "user": s.BotUserID, "bot_id": s.BotID}})
	case "chat.update":
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := range s.msgs {
			if s.msgs[i].Channel == v.Get("channel") && s.msgs[i].TS == v.Get("ts") {
				s.msgs[i].Text = v.Get("text")
				if v.Has("blocks") {
					s.msgs[i].Blocks = v.Get("blocks")
					s.msgs[i].Buttons, s.msgs[i].BlockText = buttons(s.msgs[i].Blocks)
				}
				s.msgs[i].Edits++
				writeJSON(w, map[string]any{"ok": true, "channel": s.msgs[i].Channel, "ts": s.msgs[i].TS, "text": s.msgs[i].Text})
				return
			}
		}
		fail(w, "message_not_found")
	case "chat.postEphemeral":
		if v.Get("channel") == "" || v.Get("user") == "" || v.Get("text") == "" {
			fail(w, "invalid_arguments")
			return
		}
		s.mu.Lock()
		s.ephem = append(s.ephem, Ephemeral{Channel: v.Get("channel"), User: v.Get("user"), ThreadTS: v.Get("thread_ts"), Text: v.Get("text")})
		s.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true, "message_ts": fmt.Sprintf("%d.000001", time.Now().Unix())})
	case "chat.getPermalink":
		ch, ts := v.Get("channel"), v.Get("message_ts")
		if ch == "" || ts == "" {
			fail(w, "invalid_arguments")
			return
		}
		writeJSON(w, map[string]any{"ok": true, "channel": ch,
			"permalink": "https://fake.slack.com/archives/" + ch + "/p" + strings.ReplaceAll(ts, ".", "")})
	case "apps.connections.open":
		writeJSON(w, map[string]any{"ok": true, "url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/socket"})
	default:
		fail(w, "unknown_method")
	}
}

// Messages are the bot's messages in channel, oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs {
		if m.Channel == channel {
			out = append(out, m)
		}
	}
	return out
}

// Ephemerals are the messages the bot showed single users, oldest first.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephem...)
}

// buttons reads the buttons and the text of a message's Block Kit JSON.
func buttons(blocks string) (out []Button, text string) {
	type textObj struct {
		Text string `json:"text"`
	}
	var bs []struct {
		Type     string   `json:"type"`
		BlockID  string   `json:"block_id"`
		Text     *textObj `json:"text"`
		Elements []struct {
			Type     string          `json:"type"`
			ActionID string          `json:"action_id"`
			Value    string          `json:"value"`
			Text     json.RawMessage `json:"text"`
		} `json:"elements"`
	}
	if json.Unmarshal([]byte(blocks), &bs) != nil {
		return nil, ""
	}
	var lines []string
	for _, b := range bs {
		if b.Text != nil {
			lines = append(lines, b.Text.Text)
		}
		for _, e := range b.Elements {
			var obj textObj
			var str string
			if json.Unmarshal(e.Text, &obj) != nil && json.Unmarshal(e.Text, &str) == nil {
				obj.Text = str
			}
			switch {
			case e.Type == "button":
				out = append(out, Button{ActionID: e.ActionID, BlockID: b.BlockID, Value: e.Value, Text: obj.Text})
			case b.Type == "context":
				lines = append(lines, obj.Text)
			}
		}
	}
	return out, strings.Join(lines, "\n")
}

// Calls counts the Web API calls made of method.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}
