package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const token = "123456:ABC-def_ghi"

func call(t *testing.T, s *Server, tok, method, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(s.URL+"/bot"+tok+"/"+method, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, m
}

func TestWireFormat(t *testing.T) {
	s := New(token)
	defer s.Close()
	if code, m := call(t, s, "999:wrong", "getMe", ""); code != 401 || m["ok"] != false || m["description"] != "Unauthorized" {
		t.Errorf("wrong token: %d %v", code, m)
	}
	if code, _ := call(t, s, "nonsense", "getMe", ""); code != 404 {
		t.Errorf("malformed token: %d", code)
	}
	if code, m := call(t, s, token, "getMe", ""); code != 200 || m["ok"] != true || m["result"].(map[string]any)["username"] != BotUsername {
		t.Errorf("getMe: %d %v", code, m)
	}
	// JSON and form bodies both carry parameters; markup is JSON text.
	if code, m := call(t, s, token, "sendMessage", `{"chat_id":42,"text":"hi","reply_markup":{"inline_keyboard":[[{"text":"Stop","callback_data":"stop|t1|5"}]]}}`); code != 200 ||
		m["result"].(map[string]any)["message_id"] == nil {
		t.Errorf("sendMessage: %d %v", code, m)
	}
	resp, err := http.PostForm(s.URL+"/bot"+token+"/sendMessage", url.Values{"chat_id": {"42"}, "text": {"two"}, "reply_markup": {`{"force_reply":true}`}})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("form: %v %v", err, resp)
	}
	resp.Body.Close()
	sent := s.Sent()
	if len(sent) != 2 || sent[0].Buttons[0].Data != "stop|t1|5" || !sent[1].ForceReply || sent[1].ChatID != 42 {
		t.Errorf("sent: %+v", sent)
	}
	if code, m := call(t, s, token, "sendMessage", `{"chat_id":42,"text":"`+strings.Repeat("x", 4097)+`"}`); code != 400 || !strings.Contains(m["description"].(string), "too long") {
		t.Errorf("too long: %d %v", code, m)
	}
	// 429 with retry_after, then the call goes through.
	s.FailNext("sendMessage", 1, 429, 3)
	if code, m := call(t, s, token, "sendMessage", `{"chat_id":42,"text":"x"}`); code != 429 || m["parameters"].(map[string]any)["retry_after"] != 3.0 {
		t.Errorf("429: %d %v", code, m)
	}
	if code, _ := call(t, s, token, "sendMessage", `{"chat_id":42,"text":"x"}`); code != 200 {
		t.Errorf("after the 429: %d", code)
	}
}

// getUpdates waits for an update, returns it, and an offset past it
// confirms it.
func TestLongPolling(t *testing.T) {
	s := New(token)
	defer s.Close()
	go func() {
		time.Sleep(100 * time.Millisecond)
		s.Send(Person{Chat: 7, User: 7}, "/ralph list")
	}()
	began := time.Now()
	_, m := call(t, s, token, "getUpdates", `{"timeout":5}`)
	ups := m["result"].([]any)
	if len(ups) != 1 || time.Since(began) > 4*time.Second {
		t.Fatalf("long poll: %v after %s", m, time.Since(began))
	}
	id := ups[0].(map[string]any)["update_id"].(float64)
	msg := ups[0].(map[string]any)["message"].(map[string]any)
	if msg["text"] != "/ralph list" || msg["chat"].(map[string]any)["id"] != 7.0 {
		t.Errorf("update: %v", msg)
	}
	_, m = call(t, s, token, "getUpdates", fmt.Sprintf(`{"offset":%d,"timeout":0}`, int64(id)+1))
	if len(m["result"].([]any)) != 0 || s.Confirmed() != int64(id) {
		t.Errorf("after confirming: %v, confirmed %d", m, s.Confirmed())
	}
	s.Unconfirm()
	if _, m = call(t, s, token, "getUpdates", `{"timeout":0}`); len(m["result"].([]any)) != 1 {
		t.Errorf("after Unconfirm: %v", m)
	}
}
