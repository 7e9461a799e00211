package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// content is one content block of a conversation message, in the Messages
// API's shape.
type content struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

type message struct {
	Role    string    `json:"role"`
	Content []content `json:"content"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func (u *usage) add(v usage) {
	u.InputTokens += v.InputTokens
	u.CacheCreationInputTokens += v.CacheCreationInputTokens
	u.CacheReadInputTokens += v.CacheReadInputTokens
	u.OutputTokens += v.OutputTokens
}

type request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Stream    bool      `json:"stream"`
	System    []content `json:"system,omitempty"`
	Messages  []message `json:"messages"`
	Tools     []toolDef `json:"tools"`
}

// reply is one assistant message, assembled from the stream.
type reply struct {
	ID, Model  string
	Blocks     []content
	StopReason string
	Usage      usage
}

// apiError is an error answer of the API; its text is what the agent
// reports as its result, worded like Claude Code's.
type apiError struct {
	Status       int
	Type, Detail string
}

func (e *apiError) Error() string {
	if e.Status == 0 {
		return "API Error: " + e.Detail
	}
	return fmt.Sprintf("API Error: %d %s", e.Status, e.Detail)
}

// client talks to one Messages API server.
type client struct {
	base   *url.URL
	header http.Header
	http   *http.Client
}

// newClient accepts only a server on this machine. The built-in agent
// exists for the demo's fake model: refusing other hosts guarantees that
// nothing of a project ever leaves the machine through it, whatever the
// environment says.
func newClient(baseURL, apiKey, authToken string) (*client, error) {
	if baseURL == "" {
		return nil, errors.New("ANTHROPIC_BASE_URL is not set; the built-in demo agent talks only to a local model server")
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("ANTHROPIC_BASE_URL %q is not an http URL", baseURL)
	}
	if !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("ANTHROPIC_BASE_URL %q is not on this machine; the built-in demo agent talks only to a local model server", baseURL)
	}
	h := http.Header{}
	h.Set("content-type", "application/json")
	h.Set("anthropic-version", "2023-06-01")
	if authToken != "" {
		h.Set("authorization", "Bearer "+authToken)
	} else {
		h.Set("x-api-key", apiKey)
	}
	// A bare Transport uses no proxy: the server is local, and a proxy
	// would be a way off the machine.
	return &client{base: u, header: h, http: &http.Client{Transport: &http.Transport{}}}, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// send posts one streaming request and assembles the reply; onBlock sees
// each content block as soon as it is complete, which is when Claude Code
// prints it.
func (c *client) send(ctx context.Context, req request, onBlock func(content)) (reply, error) {
	req.Stream = true
	body, err := json.Marshal(req)
	if err != nil {
		return reply{}, err
	}
	u := c.base.JoinPath("v1", "messages")
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	hr.Header = c.header.Clone()
	resp, err := c.http.Do(hr)
	if err != nil {
		return reply{}, &apiError{Detail: "Connection error: " + err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return reply{}, errorReply(resp)
	}
	return readStream(resp.Body, onBlock)
}

func errorReply(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error struct{ Type, Message string } `json:"error"`
	}
	ae := &apiError{Status: resp.StatusCode, Detail: strings.TrimSpace(string(b))}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		ae.Type, ae.Detail = e.Error.Type, e.Error.Message
	}
	return ae
}

// streamEvent is the union of the server-sent events' data.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage usage  `json:"usage"`
	} `json:"message"`
	ContentBlock content `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usage `json:"usage"`
	Error struct {
		Type, Message string
	} `json:"error"`
}

// readStream assembles a reply from the server-sent events: message_start,
// then content_block_start / _delta / _stop per block, message_delta with
// the stop reason and final usage, message_stop.
func readStream(r io.Reader, onBlock func(content)) (reply, error) {
	var rep reply
	blocks := map[int]*content{}
	input := map[int]*strings.Builder{}
	handle := func(data string) (done bool, err error) {
		var ev streamEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return false, &apiError{Detail: "malformed stream event: " + err.Error()}
		}
		switch ev.Type {
		case "message_start":
			rep.ID, rep.Model, rep.Usage = ev.Message.ID, ev.Message.Model, ev.Message.Usage
		case "content_block_start":
			b := ev.ContentBlock
			b.Input = nil // the input arrives in deltas
			blocks[ev.Index], input[ev.Index] = &b, &strings.Builder{}
		case "content_block_delta":
			b, ok := blocks[ev.Index]
			if !ok {
				return false, &apiError{Detail: fmt.Sprintf("delta for unknown block %d", ev.Index)}
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.Text += ev.Delta.Text
			case "input_json_delta":
				input[ev.Index].WriteString(ev.Delta.PartialJSON)
			}
		case "content_block_stop":
			b, ok := blocks[ev.Index]
			if !ok {
				return false, &apiError{Detail: fmt.Sprintf("stop for unknown block %d", ev.Index)}
			}
			if b.Type == "tool_use" {
				b.Input = json.RawMessage(input[ev.Index].String())
				if len(b.Input) == 0 {
					b.Input = json.RawMessage("{}")
				}
				if !json.Valid(b.Input) {
					return false, &apiError{Detail: "tool input is not valid JSON"}
				}
			}
			rep.Blocks = append(rep.Blocks, *b)
			delete(blocks, ev.Index)
			if onBlock != nil {
				onBlock(*b)
			}
		case "message_delta":
			rep.StopReason = ev.Delta.StopReason
			if ev.Usage != nil {
				rep.Usage.OutputTokens = ev.Usage.OutputTokens
			}
		case "message_stop":
			return true, nil
		case "error":
			return false, &apiError{Type: ev.Error.Type, Detail: ev.Error.Message}
		}
		return false, nil
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 32<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() == 0 {
				continue
			}
			done, err := handle(data.String())
			if err != nil || done {
				return rep, err
			}
			data.Reset()
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return rep, &apiError{Detail: "reading the stream: " + err.Error()}
	}
	return rep, &apiError{Detail: "the stream ended before message_stop"}
}
