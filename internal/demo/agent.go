package demo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"ralph/internal/analyze"
)

const (
	defaultModel    = "ralph-demo-model"
	defaultMaxTurns = 50
	maxTokens       = 8192
	// Prices in USD per token, those of a mid-size model, so the demo
	// shows ralph tracking cost with believable figures; nothing is paid.
	inputPrice  = 3.0 / 1e6
	outputPrice = 15.0 / 1e6
)

const systemPrompt = "You are the built-in demo agent of ralph. You work in the current directory " +
	"with the tools Read, Write and Edit; paths are relative to it."

// agentOptions are the parsed command line: the argv ralph gives Claude
// Code, which is all the built-in agent needs to understand.
type agentOptions struct {
	print        bool
	format       string
	verbose      bool
	allowed      []string
	resume       string
	appendSystem string
	model        string
	maxTurns     int
	prompt       string
}

func parseAgentArgs(args []string) (agentOptions, error) {
	o := agentOptions{format: "text", model: defaultModel, maxTurns: defaultMaxTurns}
	var prompt []string
	value := func(i *int) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("option %s needs a value", args[*i])
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		var err error
		switch a := args[i]; a {
		case "-p", "--print":
			o.print = true
		case "--verbose":
			o.verbose = true
		case "--output-format":
			o.format, err = value(&i)
		case "--resume", "-r":
			o.resume, err = value(&i)
		case "--append-system-prompt":
			o.appendSystem, err = value(&i)
		case "--model":
			o.model, err = value(&i)
		case "--effort":
			_, err = value(&i) // accepted for compatibility; the demo's model has one effort
		case "--mcp-config", "--permission-prompt-tool":
			// ralph serve passes its gate; the demo's script never calls a
			// tool outside the allow-list, nor asks inside a call.
			_, err = value(&i)
		case "--max-turns":
			var v string
			if v, err = value(&i); err == nil {
				if o.maxTurns, err = strconv.Atoi(v); err == nil && o.maxTurns < 1 {
					err = fmt.Errorf("--max-turns must be positive")
				}
			}
		case "--allowedTools", "--allowed-tools":
			// Variadic, as in Claude Code: the words up to the next option.
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				o.allowed = append(o.allowed, analyze.SplitToolList(args[i])...)
			}
		case "--":
			prompt = append(prompt, args[i+1:]...)
			i = len(args)
		default:
			if strings.HasPrefix(a, "-") {
				return o, fmt.Errorf("unknown option %s", a)
			}
			prompt = append(prompt, a)
		}
		if err != nil {
			return o, err
		}
	}
	switch o.format {
	case "text", "json":
	case "stream-json":
		if !o.verbose {
			return o, errors.New("--output-format=stream-json requires --verbose, as in Claude Code")
		}
	default:
		return o, fmt.Errorf("unknown output format %q (want text, json or stream-json)", o.format)
	}
	if !o.print {
		return o, errors.New("the built-in demo agent only runs non-interactively: pass -p")
	}
	o.prompt = strings.Join(prompt, " ")
	return o, nil
}

// allows says whether a tool call may run. Read is always allowed and the
// others only when listed, which is how Claude Code treats an allow-list
// in -p mode: a refused call is reported back, and in permission_denials.
func (o agentOptions) allows(tool string) bool {
	return tool == "Read" || slices.Contains(o.allowed, tool)
}

// RunAgent is the built-in demo agent: a small but real agent client that
// takes Claude Code's command line (-p, --output-format, --verbose,
// --allowedTools, --resume, --append-system-prompt, --model), sends the
// prompt to the Messages API at $ANTHROPIC_BASE_URL (which must be on this
// machine), runs the Read, Write and Edit calls it gets back inside the
// working directory, and prints a Claude Code compatible transcript, so
// ralph's live view and analyzer treat it like Claude Code. It returns the
// process exit code.
func RunAgent(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "demo agent:", err)
		return 1
	}
	return runAgent(ctx, dir, args, env, stdin, stdout, stderr)
}

func runAgent(ctx context.Context, dir string, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "demo agent:", err)
		return 1
	}
	o, err := parseAgentArgs(args)
	if err != nil {
		return fail(err)
	}
	if strings.TrimSpace(o.prompt) == "" && stdin != nil {
		b, err := io.ReadAll(io.LimitReader(stdin, 16<<20))
		if err != nil {
			return fail(err)
		}
		o.prompt = string(b)
	}
	if strings.TrimSpace(o.prompt) == "" {
		return fail(errors.New("no prompt: give it after -p or on standard input"))
	}
	c, err := newClient(env("ANTHROPIC_BASE_URL"), env("ANTHROPIC_API_KEY"), env("ANTHROPIC_AUTH_TOKEN"))
	if err != nil {
		return fail(err)
	}
	ws, err := openWorkspace(dir)
	if err != nil {
		return fail(err)
	}
	defer ws.Close()
	sess, err := openSession(sessionDir(env), o.resume)
	if err != nil {
		return fail(err)
	}
	out := &transcript{w: stdout, format: o.format, session: sess.ID, model: o.model, start: time.Now()}
	out.init(dir)
	a := &agentRun{opts: o, client: c, ws: ws, sess: sess, out: out}
	return a.run(ctx)
}

type agentRun struct {
	opts   agentOptions
	client *client
	ws     *workspace
	sess   *session
	out    *transcript
}

// run is the agent loop: send the conversation, run the tool calls of the
// reply, send their results, until the model ends its turn.
func (a *agentRun) run(ctx context.Context) int {
	system := []content{{Type: "text", Text: systemPrompt}}
	if a.opts.appendSystem != "" {
		system = append(system, content{Type: "text", Text: a.opts.appendSystem})
	}
	a.sess.Messages = append(a.sess.Messages, message{Role: "user", Content: []content{{Type: "text", Text: a.opts.prompt}}})
	for turn := 1; ; turn++ {
		if turn > a.opts.maxTurns {
			return a.out.result("error_max_turns", "", fmt.Errorf("reached the maximum number of turns (%d)", a.opts.maxTurns))
		}
		req := request{Model: a.opts.model, MaxTokens: maxTokens, System: system, Messages: a.sess.Messages, Tools: toolDefs}
		apiStart := time.Now()
		rep, err := a.client.send(ctx, req, a.out.assistant)
		a.out.apiTime += time.Since(apiStart)
		a.out.turns = turn
		a.out.usage.add(rep.Usage)
		if ctx.Err() != nil {
			_ = a.sess.save()
			return 130
		}
		if err != nil {
			_ = a.sess.save()
			return a.out.result("success", "", err)
		}
		if rep.Model != "" {
			a.out.model = rep.Model
		}
		a.sess.Messages = append(a.sess.Messages, message{Role: "assistant", Content: rep.Blocks})
		var results []content
		for _, b := range rep.Blocks {
			if b.Type == "tool_use" {
				results = append(results, a.call(b))
			}
		}
		if len(results) == 0 {
			if err := a.sess.save(); err != nil {
				return a.out.result("success", "", fmt.Errorf("save the session: %w", err))
			}
			return a.out.result("success", lastText(rep.Blocks), nil)
		}
		a.sess.Messages = append(a.sess.Messages, message{Role: "user", Content: results})
		a.out.toolResults(results)
		if err := a.sess.save(); err != nil {
			return a.out.result("success", "", fmt.Errorf("save the session: %w", err))
		}
	}
}

// call runs one tool call, or refuses it, and returns its result block.
func (a *agentRun) call(b content) content {
	res := content{Type: "tool_result", ToolUseID: b.ID}
	if !a.opts.allows(b.Name) {
		a.out.denied(b)
		res.IsError = true
		res.Content = fmt.Sprintf("Permission to use %s has not been granted (it is not in --allowedTools).", b.Name)
		return res
	}
	text, err := a.ws.run(b.Name, b.Input)
	if err != nil {
		res.IsError = true
		text = "<tool_use_error>" + err.Error() + "</tool_use_error>"
	}
	res.Content = text
	return res
}

func lastText(blocks []content) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// session is a conversation kept between calls for --resume.
type session struct {
	ID       string    `json:"session_id"`
	Messages []message `json:"messages"`
	path     string
}

var sessionIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// sessionDir is where sessions are kept: beside Claude Code's own data when
// its config directory is set (the demo gives each run a fresh one).
func sessionDir(env func(string) string) string {
	for _, base := range []string{env("CLAUDE_CONFIG_DIR"), env("TMPDIR"), os.TempDir()} {
		if base != "" {
			return filepath.Join(base, "ralph-demo-agent", "sessions")
		}
	}
	return ""
}

// openSession starts a session, or loads the one to resume. The id
// becomes a file name, so only the UUID form the agent hands out is taken.
func openSession(dir, resume string) (*session, error) {
	if resume == "" {
		id := newSessionID()
		return &session{ID: id, path: filepath.Join(dir, id+".json")}, nil
	}
	if !sessionIDPattern.MatchString(resume) {
		return nil, fmt.Errorf("no conversation found with session ID: %s", resume)
	}
	s := &session{path: filepath.Join(dir, resume+".json")}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no conversation found with session ID: %s", resume)
	} else if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("session %s: %w", resume, err)
	}
	s.ID = resume
	// A call interrupted between a tool call and its result leaves a
	// conversation the API would refuse: the unanswered calls are dropped.
	if n := len(s.Messages); n > 0 && s.Messages[n-1].Role == "assistant" &&
		slices.ContainsFunc(s.Messages[n-1].Content, func(c content) bool { return c.Type == "tool_use" }) {
		s.Messages = s.Messages[:n-1]
	}
	return s, nil
}

func (s *session) save() error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
