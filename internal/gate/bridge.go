package gate

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
)

// AgentSessionEnv is where Claude Code (2.1.329) tells the MCP servers it
// starts which session they serve.
const AgentSessionEnv = "CLAUDE_CODE_SESSION_ID"

// validSession accepts what may be an agent session id: the letters real
// ids use, bounded (loop.ValidSessionID checks it again where it is used).
func validSession(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// Bridge is `ralph mcp-bridge`: the stdio MCP server the agent's CLI
// starts. It connects to the gate of the call it runs in (callDir, the
// value of agent.CallDirEnv), presents secret and then copies bytes both
// ways until either side ends. It knows nothing of MCP: the server is the
// owning ralph's.
func Bridge(callDir, secret string, stdin io.Reader, stdout io.Writer) error {
	if callDir == "" || secret == "" {
		return errors.New("mcp-bridge: runs only inside an agent call that ralph started with its gate (no call directory or secret in the environment)")
	}
	// Dialled from inside the directory: its path may be longer than a
	// socket address holds, and the bridge is a process of its own.
	if err := os.Chdir(callDir); err != nil {
		return fmt.Errorf("mcp-bridge: %w", err)
	}
	conn, err := net.Dial("unix", SocketName)
	if err != nil {
		return fmt.Errorf("mcp-bridge: %w", err)
	}
	defer conn.Close()
	// The agent session the call runs in, as the agent's CLI tells its
	// MCP servers: a pending item a restart outlives names it, for the
	// next call to resume.
	hello := secret
	if s := os.Getenv(AgentSessionEnv); validSession(s) {
		hello += " " + s
	}
	if _, err := io.WriteString(conn, hello+"\n"); err != nil {
		return fmt.Errorf("mcp-bridge: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, stdin)
		// The CLI closed our stdin: it is done with the server.
		if uc, ok := conn.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
		done <- err
	}()
	_, err = io.Copy(stdout, conn)
	return err
}
