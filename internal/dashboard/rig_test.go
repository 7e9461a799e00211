package dashboard

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"ralph/internal/servetest"
)

// TestMain builds the daemon the browser drives once for the package
// (servetest.Ralph), with -race when the tests have it.
func TestMain(m *testing.M) { os.Exit(servetest.Tests(m).Run()) }

// daemonRig is a real `ralph serve` whose sessions' agent is the scripted
// fake, as the fleet tests in internal/cli use, with a token of the test's.
type daemonRig struct{ *servetest.Daemon }

func newDaemonRig(t *testing.T) daemonRig {
	return daemonRig{servetest.New(t, servetest.Options{Token: "dashboard-browser-test-token-0123456789"})}
}

// ok is an API call with the token that must succeed.
func (r daemonRig) ok(method, path, body string) string {
	r.T.Helper()
	code, out := r.API(method, path, r.Token, body)
	if code/100 != 2 {
		r.T.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	return out
}

// state is the session's task state, by the API.
func (r daemonRig) state(session string) string {
	r.T.Helper()
	var v struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal([]byte(r.ok("GET", "/api/tasks/"+session, "")), &v); err != nil {
		r.T.Fatal(err)
	}
	return v.State
}

// cpu is the daemon's CPU time so far (user and system).
func (r daemonRig) cpu() time.Duration {
	r.T.Helper()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", r.Pid())); err != nil {
		r.T.Skipf("no /proc: %v", err)
	}
	return servetest.CPUTime(r.Pid())
}

// resultLine ends an agent call with a cost and tokens, for the
// statistics page to chart.
func resultLine(session, text string) json.RawMessage {
	return servetest.Result{Session: session, Text: text, CostUSD: 0.0125, InputTokens: 1200, OutputTokens: 340}.Line()
}
