package slacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Msg is a person's message to turn into an event.
type Msg struct {
	Channel, ChannelType, User, Text, TS, ThreadTS, BotID, SubType string
}

var seq atomic.Int64

// Callback is an event_callback body for m as the Events API sends it
// (the type is app_mention when mention is set, message otherwise), with
// its event_id.
func Callback(m Msg, mention bool) (body []byte, eventID string) {
	typ := "message"
	if mention {
		typ = "app_mention"
	}
	if m.ChannelType == "" {
		m.ChannelType = "channel"
	}
	ev := map[string]any{"type": typ, "channel": m.Channel, "user": m.User, "text": m.Text, "ts": m.TS, "event_ts": m.TS}
	if typ == "message" {
		ev["channel_type"] = m.ChannelType
	}
	for k, v := range map[string]string{"thread_ts": m.ThreadTS, "bot_id": m.BotID, "subtype": m.SubType} {
		if v != "" {
			ev[k] = v
		}
	}
	eventID = fmt.Sprintf("Ev%08d", seq.Add(1))
	body, _ = json.Marshal(map[string]any{"token": "verification-token-unused", "team_id": "TFAKE", "api_app_id": "AFAKE",
		"type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(), "event": ev})
	return body, eventID
}

// Sign is the X-Slack-Signature of body sent at ts with secret.
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:%s", ts.Unix(), body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Post delivers body to an Events API endpoint signed with secret at ts;
// retry > 0 sets X-Slack-Retry-Num as Slack's redelivery does. It returns
// the HTTP status and the response body.
func Post(endpoint, secret string, ts time.Time, body []byte, retry int) (int, string, error) {
	req, err := http.NewRequest("POST", endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(secret, ts, body))
	if retry > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
		req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String(), nil
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socket is the Socket Mode websocket: hello on connect, then envelopes
// from Send; the client's acks are recorded.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	_ = s.write(c, map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": "AFAKE"}, "debug_info": map[string]any{"host": "fake"}})
	go func() {
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				return
			}
			var ack struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if json.Unmarshal(b, &ack) == nil && ack.EnvelopeID != "" {
				s.mu.Lock()
				s.acks[ack.EnvelopeID] = true
				s.mu.Unlock()
			}
		}
	}()
	// Keep the client's ping deadline fed, as Slack does.
	go func() {
		for {
			time.Sleep(5 * time.Second)
			if c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second)) != nil {
				return
			}
		}
	}()
}

func (s *Server) write(c *websocket.Conn, v any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return c.WriteJSON(v)
}

// Connected says whether a Socket Mode client is connected.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns) > 0
}

// Send pushes an event_callback body (from Callback) over the newest
// socket as an events_api envelope and returns its envelope id.
func (s *Server) Send(body []byte) (string, error) {
	return s.sendEnvelope(map[string]any{"type": "events_api", "accepts_response_payload": false,
		"retry_attempt": 0, "retry_reason": "", "payload": json.RawMessage(body)})
}

// sendEnvelope writes env, given its envelope id, to the newest socket.
func (s *Server) sendEnvelope(env map[string]any) (string, error) {
	s.mu.Lock()
	var c *websocket.Conn
	if n := len(s.conns); n > 0 {
		c = s.conns[n-1]
	}
	s.mu.Unlock()
	if c == nil {
		return "", errors.New("slacktest: no Socket Mode client connected")
	}
	id := fmt.Sprintf("env-%d", seq.Add(1))
	env["envelope_id"] = id
	return id, s.write(c, env)
}

// Acked says whether the client acknowledged envelope id.
func (s *Server) Acked(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acks[id]
}

// Interaction is the block_actions payload Slack sends when user presses
// button b of the bot's message m, as its Interactivity delivers it.
func Interaction(m Message, b Button, user string) []byte {
	ts := fmt.Sprintf("%d.%06d", time.Now().Unix(), seq.Add(1))
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "api_app_id": "AFAKE", "token": "verification-token-unused", "trigger_id": "trigger-" + ts,
		"team":    map[string]any{"id": "TFAKE", "domain": "fake"},
		"user":    map[string]any{"id": user, "username": strings.ToLower(user), "team_id": "TFAKE"},
		"channel": map[string]any{"id": m.Channel, "name": "dev"},
		"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false,
			"thread_ts": m.ThreadTS},
		"message": map[string]any{"type": "message", "user": "UBOT", "bot_id": "BBOT", "ts": m.TS, "thread_ts": m.ThreadTS,
			"text": m.Text, "blocks": json.RawMessage(orEmpty(m.Blocks))},
		"response_url": "https://hooks.invalid/actions/" + ts,
		"actions": []map[string]any{{"type": "button", "action_id": b.ActionID, "block_id": b.BlockID, "value": b.Value,
			"text": map[string]any{"type": "plain_text", "text": b.Text, "emoji": true}, "action_ts": ts}},
	})
	return payload
}

func orEmpty(blocks string) string {
	if blocks == "" {
		return "[]"
	}
	return blocks
}

// Press delivers a block_actions payload (from Interaction) to an
// Interactivity endpoint as Slack does: form encoded as payload=…, signed
// with secret at ts. It returns the HTTP status and the response body.
func Press(endpoint, secret string, ts time.Time, payload []byte) (int, string, error) {
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	req, err := http.NewRequest("POST", endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(secret, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String(), nil
}

// SendInteractive pushes a block_actions payload (from Interaction) over
// the newest socket as an interactive envelope, as Socket Mode delivers a
// press; it returns the envelope id.
func (s *Server) SendInteractive(payload []byte) (string, error) {
	return s.sendEnvelope(map[string]any{"type": "interactive", "accepts_response_payload": false,
		"payload": json.RawMessage(payload)})
}
