package gate

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestPermissionResult(t *testing.T) {
	bash := Approval{Tool: "Bash", Input: json.RawMessage(`{"command":"npm publish"}`)}
	for _, c := range []struct {
		name string
		a    Approval
		d    Decision
		want string
	}{
		{"allow keeps the input", bash, Decision{Allow: true}, `{"behavior":"allow","updatedInput":{"command":"npm publish"}}`},
		{"allow without input", Approval{Tool: "X"}, Decision{Allow: true}, `{"behavior":"allow","updatedInput":{}}`},
		{"deny with the message", bash, Decision{Message: " not today "}, `{"behavior":"deny","message":"not today"}`},
		{"deny without a message", bash, Decision{}, `{"behavior":"deny","message":"denied by the person running ralph"}`},
	} {
		if got := permissionResult(c.a, c.d); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

type nobody struct{}

func (nobody) Ask(context.Context, Question) (string, error)       { return "", ErrNobody }
func (nobody) Approve(context.Context, Approval) (Decision, error) { return Decision{}, ErrNobody }

// A connection without the call's secret gets no MCP session: the socket
// closes without a word.
func TestGateRefusesWrongSecret(t *testing.T) {
	dir := t.TempDir()
	g := &Gate{Responder: nobody{}, Bridge: "/bin/true"}
	env, stop, err := g.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if len(env) == 0 {
		t.Fatal("no secret for the agent")
	}
	for _, hello := range []string{"wrong\n", ""} {
		c, err := net.Dial("unix", filepath.Join(dir, SocketName))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(hello + `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"))
		if hello == "" {
			c.(*net.UnixConn).CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(helloTimeout + 5*time.Second))
		if line, err := bufio.NewReader(c).ReadString('\n'); err == nil {
			t.Errorf("hello %q: answered %s", hello, line)
		}
		c.Close()
	}
}

// The wait clock counts overlapping waits once and a wait under way as it
// goes.
func TestWaited(t *testing.T) {
	g := &Gate{}
	end1 := g.wait()
	end2 := g.wait()
	time.Sleep(50 * time.Millisecond)
	if w := g.Waited(); w < 50*time.Millisecond {
		t.Errorf("under way: %v", w)
	}
	end1()
	time.Sleep(20 * time.Millisecond)
	end2()
	done := g.Waited()
	time.Sleep(30 * time.Millisecond)
	if g.Waited() != done || done < 70*time.Millisecond || done > time.Second {
		t.Errorf("after: %v then %v", done, g.Waited())
	}
}

func TestBridgeOutsideACall(t *testing.T) {
	err := Bridge("", "", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "runs only inside an agent call") {
		t.Errorf("got %v", err)
	}
}

// The tools a call sees over its socket: both, or ask alone for an
// ask-only gate.
func TestGateTools(t *testing.T) {
	for _, c := range []struct {
		askOnly bool
		want    string
	}{{false, "approve,ask"}, {true, "ask"}} {
		dir := t.TempDir()
		g := &Gate{Responder: nobody{}, Bridge: "/bin/true", AskOnly: c.askOnly}
		env, stop, err := g.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("unix", filepath.Join(dir, SocketName))
		if err != nil {
			t.Fatal(err)
		}
		secret, _ := strings.CutPrefix(env[0], SecretEnv+"=")
		conn.Write([]byte(secret + "\n"))
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if got := strings.Join(names, ","); got != c.want {
			t.Errorf("askOnly %v: tools %s, want %s", c.askOnly, got, c.want)
		}
		cs.Close()
		stop()
	}
}

type slowPerson struct{ delay time.Duration }

func (p slowPerson) Ask(ctx context.Context, q Question) (string, error) {
	select {
	case <-time.After(p.delay):
		return "later", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
func (slowPerson) Approve(context.Context, Approval) (Decision, error) { return Decision{}, ErrNobody }

// A tool waiting for a person sends progress notifications on the call's
// progress token, so that the CLI's limit on silent tool calls never
// fires; they stop with the answer.
func TestGateKeepsTheCallAlive(t *testing.T) {
	dir := t.TempDir()
	g := &Gate{Responder: slowPerson{400 * time.Millisecond}, Bridge: "/bin/true", ProgressEvery: 50 * time.Millisecond}
	env, stop, err := g.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	conn, err := net.Dial("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := strings.CutPrefix(env[0], SecretEnv+"=")
	conn.Write([]byte(secret + "\n"))
	var mu sync.Mutex
	var progress []string
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
		}})
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: ToolAsk, Arguments: map[string]any{"question": "When?"}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "later" {
		t.Fatalf("result %+v", res.Content)
	}
	time.Sleep(150 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < 3 || len(progress) > 9 || progress[0] != "waiting for a person" {
		t.Errorf("progress notifications while waiting 400ms every 50ms: %q", progress)
	}
}
