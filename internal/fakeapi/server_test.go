package fakeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStreamFraming(t *testing.T) {
	text := "Let me write that.\nIt has ünïcödé ✓ and is long enough to be split."
	script := Script{Iterations: []Iteration{{Turns: []Turn{{
		Text: text,
		ToolUses: []ToolUse{
			{Name: "Write", Input: json.RawMessage(`{"file_path": "/p/hello.txt", "content": "hello\nworld, with a long enough line\n"}`)},
			{Name: "Bash", Input: json.RawMessage(`{"command":"cat hello.txt"}`)},
		},
		Usage:   &Usage{InputTokens: 1234, OutputTokens: 56, CacheReadInputTokens: 7},
		Headers: map[string]string{"anthropic-ratelimit-unified-status": "allowed_warning"},
	}}}}}
	s := Start(t, script)
	resp, body := post(t, s.URL, "/v1/messages?beta=true", messagesBody(true, freshPrompt("go")))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := resp.Header.Get("anthropic-ratelimit-unified-status"); got != "allowed_warning" {
		t.Errorf("scripted header = %q", got)
	}
	events := readSSE(t, body)

	var names []string
	for _, e := range events {
		if len(names) == 0 || names[len(names)-1] != e.name || e.name != "content_block_delta" {
			names = append(names, e.name) // runs of deltas collapse to one
		}
	}
	wantNames := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("event sequence\n got %v\nwant %v", names, wantNames)
	}

	start := events[0].data
	if m := start["message"].(map[string]any); m["model"] != "claude-test-1" || m["role"] != "assistant" || m["stop_reason"] != nil {
		t.Errorf("message_start.message = %v", m)
	}
	if in, out := num(t, start, "message", "usage", "input_tokens"), num(t, start, "message", "usage", "output_tokens"); in != 1234 || out != 1 {
		t.Errorf("message_start usage in=%d out=%d, want 1234, 1", in, out)
	}

	// Reassemble the blocks the way a client does.
	texts := map[int]string{}
	starts := map[int]map[string]any{}
	for _, e := range events {
		switch e.name {
		case "content_block_start":
			starts[num(t, e.data, "index")] = e.data["content_block"].(map[string]any)
		case "content_block_delta":
			d := e.data["delta"].(map[string]any)
			i := num(t, e.data, "index")
			switch d["type"] {
			case "text_delta":
				texts[i] += d["text"].(string)
			case "input_json_delta":
				texts[i] += d["partial_json"].(string)
			default:
				t.Errorf("delta type %v", d["type"])
			}
		}
	}
	if texts[0] != text || starts[0]["type"] != "text" {
		t.Errorf("block 0 = %v %q", starts[0], texts[0])
	}
	for i, want := range []struct{ name, input string }{
		{"Write", `{"file_path":"/p/hello.txt","content":"hello\nworld, with a long enough line\n"}`},
		{"Bash", `{"command":"cat hello.txt"}`},
	} {
		blk := starts[i+1]
		if blk["type"] != "tool_use" || blk["name"] != want.name || !ownID.MatchString(blk["id"].(string)) {
			t.Errorf("block %d start = %v", i+1, blk)
		}
		if texts[i+1] != want.input {
			t.Errorf("block %d input = %s, want %s", i+1, texts[i+1], want.input)
		}
	}

	delta := events[len(events)-2].data
	if sr := delta["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Errorf("stop_reason = %v", sr)
	}
	if out := num(t, delta, "usage", "output_tokens"); out != 56 {
		t.Errorf("message_delta output_tokens = %d", out)
	}
}

func TestJSONReply(t *testing.T) {
	s := Start(t, Script{Model: "claude-fake-9", Iterations: []Iteration{{Turns: []Turn{
		TextTurn("Hello!"),
	}}}})
	body := messagesBody(false, freshPrompt("hi"))
	resp, raw := post(t, s.URL, "/v1/messages", body)
	var r jsonReply
	if err := json.Unmarshal(raw, &r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v: %s", resp.StatusCode, err, raw)
	}
	if r.Type != "message" || r.Role != "assistant" || r.Model != "claude-fake-9" ||
		r.StopReason != "end_turn" || r.text() != "Hello!" || !strings.HasPrefix(r.ID, "msg_") {
		t.Errorf("reply = %+v", r)
	}
	// Without scripted usage the estimate follows the request size.
	reqs := s.MessageRequests()
	if want := len(reqs[0].Body) / 4; r.Usage.InputTokens != want || r.Usage.OutputTokens < 1 {
		t.Errorf("usage = %+v, want input %d", r.Usage, want)
	}
}

// stepScript has distinct text per step, a tool call in every turn but the
// last of each iteration.
func stepScript() Script {
	shape := []int{3, 2, 1}
	var s Script
	for i, n := range shape {
		var it Iteration
		for j := range n {
			turn := TextTurn(fmt.Sprintf("i%dt%d", i, j))
			if j < n-1 {
				turn = ToolTurn(turn.Text, "Bash", map[string]string{"command": "true"})
			}
			it.Turns = append(it.Turns, turn)
		}
		s.Iterations = append(s.Iterations, it)
	}
	return s
}

func TestTurnSelection(t *testing.T) {
	type step struct {
		action     string // fresh: new session; tools: answer the tool calls; prompt: new prompt in the same session
		iter, turn int
		status     int // 0 means 200
	}
	tests := []struct {
		name   string
		mode   string
		repeat bool
		steps  []step
	}{
		{"fresh sessions take the next iteration", "", false, []step{
			{"fresh", 0, 0, 0}, {"tools", 0, 1, 0}, {"tools", 0, 2, 0},
			{"fresh", 1, 0, 0}, {"tools", 1, 1, 0},
			{"fresh", 2, 0, 0},
		}},
		{"a resumed session takes the next iteration", "", false, []step{
			{"fresh", 0, 0, 0}, {"tools", 0, 1, 0}, {"tools", 0, 2, 0},
			{"prompt", 1, 0, 0}, {"tools", 1, 1, 0},
			{"prompt", 2, 0, 0},
		}},
		{"an aborted iteration is not resumed", "", false, []step{
			{"fresh", 0, 0, 0}, {"fresh", 1, 0, 0}, {"tools", 1, 1, 0},
		}},
		{"exhausted script answers 500", "", false, []step{
			{"fresh", 0, 0, 0}, {"fresh", 1, 0, 0}, {"fresh", 2, 0, 0}, {"fresh", 3, 0, 500},
		}},
		{"repeat_last replays the last iteration", "", true, []step{
			{"fresh", 0, 0, 0}, {"fresh", 1, 0, 0}, {"fresh", 2, 0, 0}, {"fresh", 2, 0, 0}, {"fresh", 2, 0, 0},
		}},
		{"stateless replays iteration 0 for every fresh session", ModeStateless, false, []step{
			{"fresh", 0, 0, 0}, {"tools", 0, 1, 0},
			{"fresh", 0, 0, 0}, {"tools", 0, 1, 0}, {"tools", 0, 2, 0},
			{"prompt", 1, 0, 0}, {"tools", 1, 1, 0}, {"prompt", 2, 0, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := stepScript()
			script.Mode, script.RepeatLast = tt.mode, tt.repeat
			s := Start(t, script)
			var conv []msg
			var last jsonReply
			for k, st := range tt.steps {
				switch st.action {
				case "fresh":
					conv = freshPrompt("do step")
				case "tools":
					conv = append(conv, last.assistant(), last.toolResults("ok"))
				case "prompt":
					conv = append(conv, last.assistant(), msg{"role": "user", "content": "next step"})
				}
				resp, raw := post(t, s.URL, "/v1/messages?beta=true", messagesBody(false, conv))
				want := st.status
				if want == 0 {
					want = 200
				}
				if resp.StatusCode != want {
					t.Fatalf("step %d (%s): status %d, want %d: %s", k, st.action, resp.StatusCode, want, raw)
				}
				reqs := s.MessageRequests()
				if got := reqs[len(reqs)-1]; got.Iteration != st.iter || got.Turn != st.turn {
					t.Fatalf("step %d (%s): iteration %d turn %d, want %d %d", k, st.action, got.Iteration, got.Turn, st.iter, st.turn)
				}
				if want != 200 {
					continue
				}
				last = jsonReply{}
				if err := json.Unmarshal(raw, &last); err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("i%dt%d", st.iter, st.turn); last.text() != want {
					t.Fatalf("step %d: reply %q, want %q", k, last.text(), want)
				}
			}
			wantProblems := 0
			if tt.steps[len(tt.steps)-1].status == 500 {
				wantProblems = 1
			}
			if p := s.Problems(); len(p) != wantProblems {
				t.Errorf("problems = %q, want %d", p, wantProblems)
			}
		})
	}
}

func TestForeignToolIDsAreCounted(t *testing.T) {
	// A client resuming a session the fake never saw (another fake, a
	// restart) still gets a reply picked by counting.
	s := Start(t, stepScript())
	conv := append(freshPrompt("go"),
		msg{"role": "assistant", "content": []msg{{"type": "tool_use", "id": "toolu_01Foreign", "name": "Bash", "input": msg{}}}},
		msg{"role": "user", "content": []msg{{"type": "tool_result", "tool_use_id": "toolu_01Foreign", "content": "ok"}}},
	)
	_, raw := post(t, s.URL, "/v1/messages", messagesBody(false, conv))
	var r jsonReply
	if err := json.Unmarshal(raw, &r); err != nil || r.text() != "i0t1" {
		t.Fatalf("reply %s (%v), want i0t1", raw, err)
	}
}

func TestTextPlaceholders(t *testing.T) {
	s := Start(t, Script{Iterations: []Iteration{{Turns: []Turn{
		ToolTurn("", "Bash", map[string]string{"command": "ls"}),
		TextTurn("p={{prompt}} r={{tool_result}} i={{iteration}} t={{turn}}"),
	}}}})
	_, raw := post(t, s.URL, "/v1/messages", messagesBody(false, freshPrompt("list files")))
	var first jsonReply
	if err := json.Unmarshal(raw, &first); err != nil {
		t.Fatal(err)
	}
	conv := append(freshPrompt("list files"), first.assistant(), first.toolResults("a.txt"))
	_, raw = post(t, s.URL, "/v1/messages", messagesBody(false, conv))
	var second jsonReply
	if err := json.Unmarshal(raw, &second); err != nil {
		t.Fatal(err)
	}
	want := "p=<system-reminder>be brief</system-reminder>\nlist files r=a.txt i=0 t=1"
	if second.text() != want {
		t.Errorf("text = %q, want %q", second.text(), want)
	}
}

func TestConcurrentSessionsEachGetOneIteration(t *testing.T) {
	const n = 40
	var script Script
	for i := range n {
		script.Iterations = append(script.Iterations, Iteration{Turns: []Turn{TextTurn(fmt.Sprint(i))}})
	}
	s := Start(t, script)
	var wg sync.WaitGroup
	texts := make([]string, n)
	for i := range n {
		wg.Go(func() {
			resp, raw := post(t, s.URL, "/v1/messages", messagesBody(i%2 == 0, freshPrompt("go")))
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
				return
			}
			if i%2 == 0 {
				texts[i] = streamedText(t, raw)
				return
			}
			var r jsonReply
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Error(err)
			}
			texts[i] = r.text()
		})
		wg.Go(func() { _, _ = s.Requests(), s.Problems() })
	}
	wg.Wait()
	seen := map[string]int{}
	for _, txt := range texts {
		seen[txt]++
	}
	for i := range n {
		if c := seen[fmt.Sprint(i)]; c != 1 {
			t.Errorf("iteration %d served %d times (all: %v)", i, c, texts)
		}
	}
}

func streamedText(t *testing.T, body []byte) string {
	var sb strings.Builder
	for _, e := range readSSE(t, body) {
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			sb.WriteString(d["text"].(string))
		}
	}
	return sb.String()
}

func TestDelayUsesInjectedSleep(t *testing.T) {
	var mu sync.Mutex
	var slept []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		if d > time.Minute {
			return errors.New("client gone")
		}
		return nil
	}
	s := Start(t, Script{Iterations: []Iteration{
		{Turns: []Turn{{Text: "slow", Delay: Duration(2 * time.Second)}}},
		{Turns: []Turn{{Text: "never", Delay: Duration(time.Hour)}}},
	}}, WithSleep(sleep))
	_, raw := post(t, s.URL, "/v1/messages", messagesBody(false, freshPrompt("a")))
	if !strings.Contains(string(raw), "slow") {
		t.Errorf("reply after delay = %s", raw)
	}
	// When the wait is cut short nothing is written.
	rec := httptest.NewRecorder()
	body, _ := json.Marshal(messagesBody(false, freshPrompt("b")))
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(string(body))))
	if rec.Body.Len() != 0 {
		t.Errorf("aborted delay wrote %q", rec.Body.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []time.Duration{2 * time.Second, time.Hour}; !slices.Equal(slept, want) {
		t.Errorf("slept %v, want %v", slept, want)
	}
}

func TestSleepCtxStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestCloseStopsServing(t *testing.T) {
	s, err := New(Script{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL %s is not on 127.0.0.1", s.URL)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if resp, err := http.Head(s.URL + "/"); err == nil {
		resp.Body.Close()
		t.Error("fake still answers after Close")
	}
}

func TestNewRejectsInvalidScript(t *testing.T) {
	if _, err := New(Script{Iterations: []Iteration{{}}}); err == nil {
		t.Error("New accepted an iteration without turns")
	}
}

func TestPlayReplacesTheScript(t *testing.T) {
	s := Start(t, stepScript())
	reply := func() string {
		t.Helper()
		_, raw := post(t, s.URL, "/v1/messages", messagesBody(false, freshPrompt("go")))
		var r jsonReply
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("reply %s: %v", raw, err)
		}
		return r.text()
	}
	if got := reply(); got != "i0t0" {
		t.Fatalf("before Play: %q", got)
	}
	if err := s.Play(Script{RepeatLast: true, Iterations: []Iteration{{Turns: []Turn{TextTurn("first")}}, {Turns: []Turn{TextTurn("then")}}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"first", "then", "then"} {
		if got := reply(); got != want {
			t.Fatalf("after Play: %q, want %q (the new script from its first iteration)", got, want)
		}
	}
	if err := s.Play(Script{Iterations: []Iteration{{}}}); err == nil {
		t.Error("Play took a script with an empty iteration")
	}
}
