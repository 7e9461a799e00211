package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"ralph/internal/fleet"
	"ralph/internal/store"
	"strings"
	"time"
)

// DefaultListen is where the daemon listens unless told otherwise.
const DefaultListen = "127.0.0.1:7777"

// DefaultServer is the client's daemon unless --server or RALPH_SERVER.
const DefaultServer = "http://" + DefaultListen

// DefaultHome is RALPH_HOME when neither --home nor $RALPH_HOME says:
// $XDG_STATE_HOME/ralph, else ~/.local/state/ralph — the daemon's state is
// state, not configuration or cache.
func DefaultHome() (string, error) {
	if h := os.Getenv("RALPH_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "ralph"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("RALPH_HOME: %w (set RALPH_HOME or --home)", err)
	}
	return filepath.Join(home, ".local", "state", "ralph"), nil
}

// Client talks to a daemon's API.
type Client struct {
	Base  string
	Token string
	HTTP  *http.Client
	// Surface and User say who sends the commands (`ralph task`: cli and
	// the OS user); the daemon records them with each command.
	Surface fleet.Surface
	User    string
}

// APIError is a refusal from the daemon.
type APIError struct {
	Status int
	Msg    string
}

func (e *APIError) Error() string { return e.Msg }

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	path, query, _ := strings.Cut(path, "?")
	u, err := url.JoinPath(c.Base, path)
	if err != nil {
		return fmt.Errorf("server %q: %w", c.Base, err)
	}
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if c.Surface != "" {
		req.Header.Set(HeaderSurface, string(c.Surface))
	}
	if c.User != "" {
		req.Header.Set(HeaderUser, c.User)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach ralph serve at %s (is it running? --server or RALPH_SERVER): %w", c.Base, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var er ErrorReply
		if json.Unmarshal(data, &er) == nil && er.Error != "" {
			return &APIError{Status: resp.StatusCode, Msg: er.Error}
		}
		return &APIError{Status: resp.StatusCode, Msg: fmt.Sprintf("%s %s: %s", method, path, strings.TrimSpace(string(data)))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: reply: %w", method, path, err)
	}
	return nil
}

// List returns each session's latest task, raw (what `list --json` prints).
func (c *Client) List(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodGet, "/api/tasks", nil, &raw)
	return raw, err
}

// History returns the kept tasks the query selects (all, session, state,
// origin, since), newest first, raw.
func (c *Client) History(ctx context.Context, q url.Values) (json.RawMessage, error) {
	var raw json.RawMessage
	q.Set("all", "1")
	err := c.do(ctx, http.MethodGet, "/api/tasks?"+q.Encode(), nil, &raw)
	return raw, err
}

// Show returns a task by id with its history (TaskDetail), raw.
func (c *Client) Show(ctx context.Context, id string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodGet, "/api/tasks/id/"+url.PathEscape(id), nil, &raw)
	return raw, err
}

// Status returns a session's task, raw.
func (c *Client) Status(ctx context.Context, session string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodGet, "/api/tasks/"+url.PathEscape(session), nil, &raw)
	return raw, err
}

// Do sends one command, the shape every surface uses, and returns the
// task view the daemon answers with, raw.
func (c *Client) Do(ctx context.Context, cmd fleet.Command) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodPost, "/api/commands", cmd, &raw)
	return raw, err
}

// Watchdog returns what the watchdog watches, raw (`ralph task watchdog --json`).
func (c *Client) Watchdog(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodGet, "/api/watchdog", nil, &raw)
	return raw, err
}

// Budget returns today's spend against the daily budgets (GET /api/budget).
func (c *Client) Budget(ctx context.Context) (BudgetReport, error) {
	var r BudgetReport
	err := c.do(ctx, http.MethodGet, "/api/budget", nil, &r)
	return r, err
}

// AddressFile is where a running daemon records the URL it listens on.
func (h Home) AddressFile() string { return filepath.Join(string(h), "address") }

// WriteAddress records the daemon's URL in its home.
func WriteAddress(h Home, base string) error {
	return store.WriteViewAtomic(h.AddressFile(), []byte(base+"\n"), 0o644)
}

// Address is the URL the daemon of home last listened on, "" when none
// recorded one.
func Address(h Home) string {
	b, err := os.ReadFile(h.AddressFile())
	if err != nil {
		return ""
	}
	a := strings.TrimSpace(string(b))
	if !strings.HasPrefix(a, "http://") && !strings.HasPrefix(a, "https://") {
		return ""
	}
	return a
}
