package watchdog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// ErrNoTmux: there is no tmux to read panes with.
var ErrNoTmux = errors.New("tmux not installed")

// DefaultHistory is how many lines above the visible screen a capture
// takes: enough to see where a long message began.
const DefaultHistory = 300

// Tmux reads panes with the tmux command. It runs has-session and
// capture-pane only: nothing that types into a pane or changes a session,
// and what a pane shows is only ever read as text.
type Tmux struct {
	// Socket is the tmux server's socket (tmux -S); "" is the user's
	// default server.
	Socket string
	// History is how many lines above the screen to capture (0: DefaultHistory).
	History int
	// Bin is the tmux executable; "" looks tmux up on PATH.
	Bin string
	// Timeout bounds one tmux command (0: 5 s).
	Timeout time.Duration
}

// Exists reports whether target's tmux session exists.
func (t Tmux) Exists(ctx context.Context, target string) (bool, error) {
	sess, _, _ := strings.Cut(target, ":")
	_, err := t.run(ctx, "has-session", "-t", exact(sess))
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		// No such session, or no server running at all.
		return false, nil
	}
	return err == nil, err
}

// Capture returns the text of target's pane: its screen and History lines
// above it, wrapped lines joined, without colours.
func (t Tmux) Capture(ctx context.Context, target string) (string, error) {
	sess, rest, found := strings.Cut(target, ":")
	pane := exact(sess) + ":" + rest
	if !found {
		pane = exact(sess) + ":"
	}
	h := t.History
	if h <= 0 {
		h = DefaultHistory
	}
	out, err := t.run(ctx, "capture-pane", "-p", "-J", "-S", fmt.Sprint(-h), "-t", pane)
	return string(out), err
}

// exact makes tmux match a session's name exactly: "claude-5" alone would
// also find "claude-50".
func exact(sess string) string {
	if strings.HasPrefix(sess, "=") {
		return sess
	}
	return "=" + sess
}

func (t Tmux) run(ctx context.Context, args ...string) ([]byte, error) {
	bin := t.Bin
	if bin == "" {
		p, err := exec.LookPath("tmux")
		if err != nil {
			return nil, ErrNoTmux
		}
		bin = p
	}
	verb := args[0]
	if t.Socket != "" {
		args = append([]string{"-S", t.Socket}, args...)
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return out, fmt.Errorf("tmux %s: %s: %w", verb, msg, err)
		}
		return out, fmt.Errorf("tmux %s: %w", verb, err)
	}
	return out, nil
}
