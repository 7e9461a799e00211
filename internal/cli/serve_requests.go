package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"ralph/internal/agent"
	"ralph/internal/config"
	"ralph/internal/loop"
	"ralph/internal/requests"
	"ralph/internal/sandbox"
	"ralph/internal/serve"
)

// newRequests builds the request service (docs/requests.md) when GitHub
// repositories or a Slack bot are configured, and hooks it into the
// daemon's options: its notices, its webhooks, its prompts, and the
// sandbox of its sessions. nil when requests are off.
func newRequests(log io.Writer, home string, opts *serve.Options) (*requests.Service, error) {
	cfg, on, err := requests.FromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	if !on {
		return nil, nil
	}
	root := requests.Root(home)
	rq, err := requests.New(cfg, requests.Options{Root: root, Log: log})
	if err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	if opts.Notifier == nil {
		opts.Notifier = rq
	} else {
		opts.Notifier = serve.Notifiers{opts.Notifier, rq}
	}
	routes := maps.Clone(opts.Routes)
	if routes == nil {
		routes = map[string]http.Handler{}
	}
	maps.Copy(routes, rq.Routes())
	opts.Routes = routes
	opts.Prompt = rq.Prompt
	work := filepath.Join(root, "work")
	opts.Build = requestBuild(log, work, cfg.Sandbox, opts.Build)
	// On the Temporal backend the workers build the loops: they confine
	// what the daemon says is a request, as their own machine allows.
	opts.Confined = func(dir string) bool { return cfg.Sandbox && isRequest(work, dir) }
	var parts []string
	if cfg.On() {
		how := "polling every " + cfg.Poll.String()
		if cfg.Poll == 0 {
			how = "webhooks only"
		}
		if cfg.WebhookSecret != "" {
			how += ", webhook on " + requests.GitHubWebhookPath
		}
		parts = append(parts, fmt.Sprintf("github %s label %q (%s)", strings.Join(cfg.Repos, ","), cfg.Label, how))
	}
	if cfg.SlackOn() {
		var how []string
		if cfg.Slack.AppToken != "" {
			how = append(how, "socket mode")
		}
		if cfg.Slack.SigningSecret != "" {
			how = append(how, "events on "+requests.SlackWebhookPath, "buttons on "+requests.SlackInteractivePath)
		}
		repo := cfg.Slack.Repo
		if repo == "" {
			repo = "per channel"
		}
		parts = append(parts, fmt.Sprintf("slack → %s, %d channel(s) (%s)", repo, len(cfg.Slack.Channels), strings.Join(how, ", ")))
	}
	fmt.Fprintf(log, "ralph serve: requests on: %s\n", strings.Join(parts, "; "))
	return rq, nil
}

// requestSandbox reports whether requests' agents run in bubblewrap in
// this process: people outside the machine wrote their prompts. It is on
// unless turned off (RALPH_REQUEST_SANDBOX=off) or the environment chose a
// provider itself; where bubblewrap cannot run, the log says so and they
// run unconfined. who names the process in the log.
func requestSandbox(log io.Writer, who string, on bool) bool {
	chosen := os.Getenv("RALPH_SANDBOX_PROVIDER") != "" || os.Getenv("SANDBOX_PROVIDER") != ""
	switch {
	case !on:
		fmt.Fprintf(log, "%s: warning: RALPH_REQUEST_SANDBOX=off: requests' agents run unconfined\n", who)
	case chosen:
	default:
		if _, err := sandbox.Open(context.Background(), sandbox.Spec{Provider: sandbox.Bwrap}); err != nil {
			fmt.Fprintf(log, "%s: warning: no sandbox available for requests (%v); their agents run unconfined\n", who, err)
			return false
		}
		fmt.Fprintf(log, "%s: requests' agents run sandboxed (bubblewrap); RALPH_REQUEST_SANDBOX=off turns it off\n", who)
		return true
	}
	return false
}

// buildConfined is buildLoop with the requests' sandbox.
func buildConfined(dir string, warn io.Writer) (loop.Spec, []agent.Adapter, error) {
	over := config.Layer{"SANDBOX_PROVIDER": config.Entry{Key: "SANDBOX_PROVIDER", Value: sandbox.Bwrap,
		Source: config.Source{Kind: config.SourceFlag, Name: "requests sandbox"}}}
	return buildLoopWith(dir, warn, over)
}

// isRequest reports whether dir is a request's worktree (under work).
func isRequest(work, dir string) bool {
	rel, err := filepath.Rel(work, dir)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// requestBuild sandboxes the agents of requests' sessions (their
// worktrees are under work) where requestSandbox says so.
func requestBuild(log io.Writer, work string, on bool, build func(string, io.Writer) (loop.Spec, []agent.Adapter, error)) func(string, io.Writer) (loop.Spec, []agent.Adapter, error) {
	usable := requestSandbox(log, "ralph serve", on)
	if build == nil {
		build = buildLoop
	}
	return func(dir string, warn io.Writer) (loop.Spec, []agent.Adapter, error) {
		if !usable || !isRequest(work, dir) {
			return build(dir, warn)
		}
		return buildConfined(dir, warn)
	}
}
