package gate

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"ralph/internal/agent"
)

// helloTimeout bounds how long a connection may take to present the secret.
const helloTimeout = 10 * time.Second

// Open serves the gate on a unix socket in callDir (the call's private
// directory) until stop is called. env holds what the agent's process needs
// for its bridge to connect: the call's fresh secret.
func (g *Gate) Open(callDir string) (env []string, stop func(), err error) {
	if g.Responder == nil {
		return nil, nil, errors.New("gate: no responder")
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, nil, fmt.Errorf("gate: secret: %w", err)
	}
	secret := hex.EncodeToString(raw[:])
	path := filepath.Join(callDir, SocketName)
	ln, err := listen(callDir)
	if err != nil {
		return nil, nil, fmt.Errorf("gate: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { g.serve(ctx, conn, secret) })
		}
	})
	stop = func() {
		cancel()
		ln.Close()
		wg.Wait()
		os.Remove(path)
	}
	return []string{SecretEnv + "=" + secret, agent.BridgeEnv + "=" + g.Bridge}, stop, nil
}

// serve runs one MCP session on conn once it has presented the secret.
func (g *Gate) serve(ctx context.Context, conn net.Conn, secret string) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	_ = conn.SetReadDeadline(time.Now().Add(helloTimeout))
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	got, session, _ := strings.Cut(strings.TrimSpace(line), " ")
	if subtle.ConstantTimeCompare([]byte(got), []byte(secret)) != 1 {
		return
	}
	if !validSession(session) {
		session = ""
	}
	_ = conn.SetReadDeadline(time.Time{})
	ss, err := g.server(session).Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(br), Writer: conn}, nil)
	if err != nil {
		return
	}
	_ = ss.Wait()
}

type askInput struct {
	Question string   `json:"question" jsonschema:"the question, complete on its own: the person did not see your work"`
	Options  []string `json:"options,omitempty" jsonschema:"the answers to choose from, when there are some"`
}

type approveInput struct {
	ToolName  string         `json:"tool_name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// server is the MCP server of one connection; session is the agent
// session its CLI said it runs in ("" when it did not say).
func (g *Gate) server(session string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{
		Name: ToolAsk,
		Description: "Ask the person who runs this loop a question and wait for the answer, instead of guessing " +
			"when a decision is theirs. The answer comes back as this tool's result.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in askInput) (*mcp.CallToolResult, any, error) {
		q := Question{Text: strings.TrimSpace(in.Question), Options: in.Options, Session: session}
		if q.Text == "" {
			return nil, nil, errors.New("ask: the question is empty")
		}
		defer g.keepAlive(ctx, req)()
		return text(g.ask(ctx, q)), nil, nil
	})
	if g.AskOnly {
		return srv // approve is nobody's to call
	}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolApprove,
		Description: "ralph's permission prompt: asks the person whether a tool call outside the allow-list may run.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in approveInput) (*mcp.CallToolResult, any, error) {
		input, err := marshalInput(in.Input)
		if err != nil {
			return nil, nil, err
		}
		defer g.keepAlive(ctx, req)()
		a := Approval{Tool: in.ToolName, Input: input, ToolUseID: in.ToolUseID, Session: session}
		return text(permissionResult(a, g.approve(ctx, a))), nil, nil
	})
	return srv
}

// keepAlive tells the agent's CLI now and then that the tool still waits
// for a person: Claude Code aborts a stdio tool call that sends "no
// response or progress" for 30 minutes (docs/agents.md), whatever
// MCP_TOOL_TIMEOUT says. The returned func stops it.
func (g *Gate) keepAlive(ctx context.Context, req *mcp.CallToolRequest) func() {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return func() {}
	}
	every := g.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: "waiting for a person"})
			}
		}
	}()
	return cancel
}

// ask waits for the answer, at most the gate's timeout.
func (g *Gate) ask(ctx context.Context, q Question) string {
	ctx, cancel := context.WithTimeout(ctx, g.timeout())
	defer cancel()
	defer g.wait()()
	ans, err := g.Responder.Ask(ctx, q)
	if err != nil {
		return NoAnswer
	}
	return ans
}

// approve waits for the decision; no decision in time denies.
func (g *Gate) approve(ctx context.Context, a Approval) Decision {
	ctx, cancel := context.WithTimeout(ctx, g.timeout())
	defer cancel()
	defer g.wait()()
	d, err := g.Responder.Approve(ctx, a)
	switch {
	case err == nil:
		return d
	case errors.Is(err, context.DeadlineExceeded):
		return TimedOut(a, g.timeout())
	default:
		return Decision{Message: a.Tool + " is not allowed here and nobody could be asked; do without it"}
	}
}

// TimedOut is the denial of a tool call nobody decided on within
// timeout, in words the agent can act on.
func TimedOut(a Approval, timeout time.Duration) Decision {
	return Decision{Message: fmt.Sprintf("no decision within %v: denied; do without %s, or say in your status block what you need", timeout, a.Tool)}
}

// marshalInput keeps the tool's input as the CLI sent it, for the person to
// see and for updatedInput.
func marshalInput(in map[string]any) (json.RawMessage, error) {
	if in == nil {
		return json.RawMessage("{}"), nil
	}
	return json.Marshal(in)
}

// maxSocketPath is what fits in a unix socket address (108 bytes on Linux,
// with its terminating NUL).
const maxSocketPath = 100

// listen opens the socket in dir. A long temp directory would not fit in a
// socket address: then the socket is named through the directory's file
// descriptor, which is short and means the same file.
func listen(dir string) (net.Listener, error) {
	path := filepath.Join(dir, SocketName)
	if len(path) <= maxSocketPath {
		return net.Listen("unix", path)
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ln, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), SocketName))
	if err != nil {
		return nil, err
	}
	// Its name dies with the descriptor, which another file may reuse: the
	// socket is removed by its full path instead (Open's stop).
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, nil
}
