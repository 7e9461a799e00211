package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The Gemini API as Gemini CLI calls it:
// POST /v1beta/models/<model>:streamGenerateContent?alt=sse (and
// :generateContent, :countTokens). Text becomes text parts, each ToolUse a
// functionCall part whose id is the fake's own tool id and whose args are
// the ToolUse input.

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	Thought      bool   `json:"thought,omitempty"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// geminiRequest is the part of a generateContent body the fake reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// decodeGemini translates a generateContent body into the Messages form:
// role model is the assistant, function responses are tool results, and
// thought parts are dropped.
func decodeGemini(body []byte, model string, stream bool) (*MessagesRequest, error) {
	var gr geminiRequest
	if err := json.Unmarshal(body, &gr); err != nil {
		return nil, err
	}
	mr := &MessagesRequest{Model: model, Stream: stream}
	if si := gr.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			mr.System = append(mr.System, Block{Type: "text", Text: p.Text})
		}
	}
	for _, t := range gr.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			mr.Tools = append(mr.Tools, Tool{Name: f.Name, InputSchema: schema})
		}
	}
	for _, c := range gr.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		var blocks Content
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				blocks = append(blocks, Block{Type: "tool_use", ID: ownGeminiID(p.FunctionCall.ID), Name: p.FunctionCall.Name, Input: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				blocks = append(blocks, Block{Type: "tool_result", ToolUseID: ownGeminiID(p.FunctionResponse.ID),
					Content: Content{{Type: "text", Text: functionResponseText(p.FunctionResponse.Response)}}})
			case p.Thought:
			case p.Text != "":
				blocks = append(blocks, Block{Type: "text", Text: p.Text})
			}
		}
		mr.Messages = append(mr.Messages, Message{Role: role, Content: blocks})
	}
	return mr, nil
}

// ownGeminiID undoes Gemini CLI's renaming of call ids to
// "<tool name>__<id>", so that the fake recognises the ids it issued.
func ownGeminiID(id string) string {
	if i := strings.Index(id, "__toolu_"); i >= 0 {
		return id[i+2:]
	}
	return id
}

// functionResponseText is what a tool returned: Gemini CLI wraps it as
// {"output": ...} or {"error": ...}; anything else is kept as JSON.
func functionResponseText(raw json.RawMessage) string {
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &r) == nil {
		switch {
		case r.Output != nil:
			return *r.Output
		case r.Error != nil:
			return *r.Error
		}
	}
	return string(raw)
}

// gemini serves /v1beta/models/<model>:<method>.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, rec Request) {
	model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	var out geminiWire
	switch method {
	case "streamGenerateContent", "generateContent":
		out.stream = method == "streamGenerateContent"
		mr, err := decodeGemini(rec.Body, model, out.stream)
		s.serveModel(w, r, rec, mr, err, out)
	case "countTokens":
		s.record(rec)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, estimateTokens(len(rec.Body)))
	default:
		s.record(rec)
		out.error(w, &ErrorReply{Status: 404, Message: "fakeapi: no route for " + r.Method + " " + r.URL.Path}, s.now())
	}
}

type geminiWire struct {
	stream bool
}

// chunk is one GenerateContentResponse; the last one carries the finish
// reason and the usage.
func (gw geminiWire) chunk(r reply, parts []map[string]any, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	c := map[string]any{"candidates": []any{cand}, "modelVersion": r.model, "responseId": r.id}
	if last {
		cand["finishReason"] = "STOP"
		if r.stopReason == "max_tokens" {
			cand["finishReason"] = "MAX_TOKENS"
		}
		input, cached, out := r.usage.tokens()
		usage := map[string]any{"promptTokenCount": input, "candidatesTokenCount": out, "totalTokenCount": input + out}
		if cached > 0 {
			usage["cachedContentTokenCount"] = cached
		}
		c["usageMetadata"] = usage
	}
	return c
}

func (gw geminiWire) reply(w http.ResponseWriter, r reply) {
	// Text streams in pieces, a function call always arrives whole, as
	// from the real API; without streaming each block is one part.
	var chunkParts [][]map[string]any
	var all []map[string]any
	for _, b := range r.blocks {
		switch b.typ {
		case "text":
			all = append(all, map[string]any{"text": b.text})
			for _, c := range chunks(b.text, 24) {
				chunkParts = append(chunkParts, []map[string]any{{"text": c}})
			}
		case "tool_use":
			// The real API may leave the id out; the fake's own ids let
			// the function response name the step that asked for it.
			call := map[string]any{"functionCall": map[string]any{"id": b.id, "name": b.name, "args": b.input}}
			all = append(all, call)
			chunkParts = append(chunkParts, []map[string]any{call})
		}
	}
	if !gw.stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(gw.chunk(r, all, true))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for i, p := range chunkParts {
		b, _ := json.Marshal(gw.chunk(r, p, i == len(chunkParts)-1)) // only maps of plain values
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// grpcStatus names the google.rpc.Code the Gemini API reports for an HTTP
// status.
var grpcStatus = map[int]string{
	400: "INVALID_ARGUMENT",
	401: "UNAUTHENTICATED",
	403: "PERMISSION_DENIED",
	404: "NOT_FOUND",
	409: "ABORTED",
	429: "RESOURCE_EXHAUSTED",
	499: "CANCELLED",
	500: "INTERNAL",
	501: "UNIMPLEMENTED",
	503: "UNAVAILABLE",
	504: "DEADLINE_EXCEEDED",
	529: "UNAVAILABLE", // Anthropic's overloaded, as scripts write it
}

// rpcCodes are the google.rpc.Code names.
var rpcCodes = map[string]bool{
	"CANCELLED": true, "UNKNOWN": true, "INVALID_ARGUMENT": true, "DEADLINE_EXCEEDED": true,
	"NOT_FOUND": true, "ALREADY_EXISTS": true, "PERMISSION_DENIED": true, "RESOURCE_EXHAUSTED": true,
	"FAILED_PRECONDITION": true, "ABORTED": true, "OUT_OF_RANGE": true, "UNIMPLEMENTED": true,
	"INTERNAL": true, "UNAVAILABLE": true, "DATA_LOSS": true, "UNAUTHENTICATED": true,
}

// error writes the google.rpc error body. ErrorReply.Type is used as the
// status only when it is one of the gRPC code names, so that a script
// written with Anthropic types still reads right. A usage limit adds a
// QuotaFailure naming the claim as its quota id and a RetryInfo with the
// time left; Gemini CLI gives up at once (instead of retrying) when that
// delay is over five minutes.
func (gw geminiWire) error(w http.ResponseWriter, e *ErrorReply, now time.Time) {
	status := grpcStatus[e.Status]
	if rpcCodes[e.Type] {
		status = e.Type
	}
	if status == "" {
		status = "UNKNOWN"
	}
	msg := e.Message
	var details []any
	if u := e.UsageLimit; u != nil {
		wait := max(u.resetAt(now)-now.Unix(), 0)
		if msg == "" {
			msg = fmt.Sprintf("You exceeded your current quota, please check your plan and billing details. "+
				"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"+
				"* Quota exceeded for quota id: %s\nPlease retry in %ds.", u.Claim, wait)
		}
		details = []any{
			map[string]any{
				"@type":      "type.googleapis.com/google.rpc.QuotaFailure",
				"violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests", "quotaId": u.Claim}},
			},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", wait)},
		}
	}
	if msg == "" {
		msg = geminiErrorMessage(status)
	}
	body := map[string]any{"code": e.Status, "message": msg, "status": status}
	if details != nil {
		body["details"] = details
	}
	for k, v := range e.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": body})
}

func geminiErrorMessage(status string) string {
	switch status {
	case "RESOURCE_EXHAUSTED":
		return "Resource has been exhausted (e.g. check quota)."
	case "UNAVAILABLE":
		return "The model is overloaded. Please try again later."
	case "UNAUTHENTICATED":
		return "API key not valid. Please pass a valid API key."
	case "INVALID_ARGUMENT":
		return "Request contains an invalid argument."
	case "INTERNAL":
		return "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	default:
		return strings.ToLower(strings.ReplaceAll(status, "_", " "))
	}
}
