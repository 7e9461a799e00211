package telegramtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Person is who writes: a user in a chat (a private chat's id is the
// user's; a group's is negative).
type Person struct {
	Chat int64
	User int64
}

// Send injects a person's text message and returns its update id.
func (s *Server) Send(from Person, text string) int64 {
	return s.message(from, text, 0)
}

// Reply injects a person's reply to message to (one the bot sent).
func (s *Server) Reply(from Person, to int, text string) int64 {
	return s.message(from, text, to)
}

func (s *Server) message(from Person, text string, to int) int64 {
	s.mu.Lock()
	s.nextMsg++
	msg := map[string]any{"message_id": s.nextMsg, "date": time.Now().Unix(), "chat": chatJSON(from.Chat),
		"from": map[string]any{"id": from.User, "is_bot": false, "first_name": "person"}, "text": text}
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		msg["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": utf16Len(cmd)}}
	}
	if m := s.messages[to]; to != 0 && m != nil {
		msg["reply_to_message"] = s.messageJSON(*m)
	} else if to != 0 {
		msg["reply_to_message"] = map[string]any{"message_id": to, "date": time.Now().Unix(), "chat": chatJSON(from.Chat)}
	}
	s.mu.Unlock()
	return s.Inject(map[string]any{"message": msg})
}

// Press injects a press of a button with data under message msgID, and
// returns the update id and the callback query's id.
func (s *Server) Press(from Person, msgID int, data string) (int64, string) {
	s.mu.Lock()
	s.nextMsg++
	id := fmt.Sprintf("cb%d", s.nextMsg)
	s.callbacks[id] = true
	cq := map[string]any{"id": id, "from": map[string]any{"id": from.User, "is_bot": false, "first_name": "person"},
		"chat_instance": "ci", "data": data}
	if m := s.messages[msgID]; m != nil {
		cq["message"] = s.messageJSON(*m)
	} else {
		cq["message"] = map[string]any{"message_id": msgID, "date": 0, "chat": chatJSON(from.Chat)}
	}
	s.mu.Unlock()
	return s.Inject(map[string]any{"callback_query": cq}), id
}

// Inject adds an update (its update_id is set unless it has one: a test
// may inject the same update twice) and returns its id. With a webhook
// set, it is delivered there.
func (s *Server) Inject(u map[string]any) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id int64
	switch v := u["update_id"].(type) {
	case int64:
		id = v
	case int:
		id = int64(v)
	default:
		s.nextUpdate++
		id = s.nextUpdate
		u["update_id"] = id
	}
	raw, _ := json.Marshal(u)
	up := update{id: id, raw: raw}
	s.updates = append(s.updates, up)
	close(s.changed)
	s.changed = make(chan struct{})
	if s.hookURL != "" && s.hookQueue != nil {
		s.hookQueue <- up
	}
	return id
}

// Redeliver injects again the update with id (Telegram repeats an update
// it thinks was not delivered).
func (s *Server) Redeliver(id int64) {
	s.mu.Lock()
	var raw json.RawMessage
	for _, u := range s.updates {
		if u.id == id {
			raw = u.raw
		}
	}
	s.mu.Unlock()
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		m["update_id"] = id
		s.Inject(m)
	}
}

// Unconfirm forgets which updates the bot confirmed, as if it had died
// before its next getUpdates: a client that starts from offset 0 gets
// them all again.
func (s *Server) Unconfirm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.confirmed = 0
	close(s.changed)
	s.changed = make(chan struct{})
}

// deliver posts updates to the webhook one at a time, in order, with its
// secret token, retrying a failed delivery a few times as Telegram does.
func (s *Server) deliver(q chan update) {
	for u := range q {
		for attempt := 0; attempt < 5; attempt++ {
			s.mu.Lock()
			hook, secret := s.hookURL, s.hookSecret
			s.mu.Unlock()
			if hook == "" {
				break
			}
			req, _ := http.NewRequest(http.MethodPost, hook, bytes.NewReader(u.raw))
			req.Header.Set("Content-Type", "application/json")
			if secret != "" {
				req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
			}
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode < 300 {
					break
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// FailNext makes the next n calls of method ("" any) fail with code; a
// 429 carries retry_after seconds.
func (s *Server) FailNext(method string, n, code, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, failure{method: method, code: code, retryAfter: retryAfter})
	}
}

// Heal drops the failures FailNext asked for that have not happened yet.
func (s *Server) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = nil
}

// Sent returns the messages the bot sent or edited, in order.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// WaitSent waits up to d for a message after the first skip ones that
// satisfies ok.
func (s *Server) WaitSent(skip int, d time.Duration, ok func(Message) bool) (Message, bool) {
	deadline := time.Now().Add(d)
	for {
		sent := s.Sent()
		for i := skip; i < len(sent); i++ {
			if ok(sent[i]) {
				return sent[i], true
			}
		}
		if time.Now().After(deadline) {
			return Message{}, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Answers returns the bot's answers to button presses.
func (s *Server) Answers() []CallbackAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CallbackAnswer(nil), s.answers...)
}

// Calls counts the calls of method, failed ones too.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Confirmed is the highest update id the bot confirmed with an offset.
func (s *Server) Confirmed() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Webhook is the webhook set, if any, and its secret.
func (s *Server) Webhook() (url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hookURL, s.hookSecret
}
