package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/agent/agents"
	"ralph/internal/agent/claude"
	"ralph/internal/config"
	"ralph/internal/loop"
	"ralph/internal/sandbox"
	"ralph/internal/shellwords"
)

// agentSpec builds agent name with the settings that belong to it: its own
// command, model, extra arguments and option (sandbox, approval mode, prompt
// mode). The main agent also gets the run's effort and tool allow-list.
func agentSpec(cfg config.Config, name string) (loop.AgentSpec, agent.Adapter, error) {
	argv, err := shellwords.Split(cfg.AgentCommand(name))
	if err != nil {
		return loop.AgentSpec{}, nil, fmt.Errorf("%s command (%s): %w", name, cfg.Sources["AGENT_CMD"], err)
	}
	extra, err := cfg.AgentExtraArgs(name)
	if err != nil {
		return loop.AgentSpec{}, nil, err
	}
	o := agents.Options{Cmd: argv, ExtraArgs: extra, Now: time.Now}
	// A sandbox that cannot be used is a refusal: never the agent unconfined.
	sb, err := sandbox.Open(context.Background(), sandbox.Spec{Provider: cfg.Sandbox.Provider, Network: cfg.Sandbox.Network, Agent: name,
		Hide: agentHidden()})
	if err != nil {
		return loop.AgentSpec{}, nil, err
	}
	o.Wrap, o.OwnSandbox = sb.Wrapper(), sb.Own()
	switch name {
	case "codex":
		o.Sandbox = cfg.CodexSandbox
	case "gemini":
		o.ApprovalMode = cfg.GeminiApprovalMode
	case "command":
		o.PromptMode = cfg.CommandPromptMode
	}
	ad, err := agents.New(name, o)
	if err != nil {
		return loop.AgentSpec{}, nil, err
	}
	spec := loop.AgentSpec{Name: ad.Name(), Model: cfg.AgentModel(name)}
	if name == cfg.AgentProvider {
		spec.Effort = cfg.Effort
	}
	if name == "claude" {
		spec.AllowedTools = cfg.AllowedTools
		if len(spec.AllowedTools) == 0 {
			spec.AllowedTools = claude.DefaultAllowedTools()
		}
	}
	return spec, ad, nil
}

// agentAdapter builds the main agent. The config's splitter refuses shell
// operators: the command runs without a shell, so a pipe in it would be a
// silent mistake.
func agentAdapter(cfg config.Config) (agent.Adapter, error) {
	_, ad, err := agentSpec(cfg, cfg.AgentProvider)
	return ad, err
}

// runAgents builds the main agent then the fallbacks, in order.
func runAgents(cfg config.Config) ([]loop.AgentSpec, []agent.Adapter, error) {
	spec, ad, err := agentSpec(cfg, cfg.AgentProvider)
	if err != nil {
		return nil, nil, err
	}
	specs, ads := []loop.AgentSpec{spec}, []agent.Adapter{ad}
	for _, n := range cfg.Fallbacks() {
		spec, ad, err := agentSpec(cfg, n)
		if err != nil {
			return nil, nil, fmt.Errorf("fallback agent %s: %w", n, err)
		}
		specs, ads = append(specs, spec), append(ads, ad)
	}
	return specs, ads, nil
}

// printAgents lists the agent CLIs found on this machine with their versions
// (`ralph version`).
func printAgents(ctx context.Context, w io.Writer) {
	fmt.Fprintln(w, "agents:")
	for _, f := range agents.Detect(ctx, exec.LookPath) {
		switch {
		case f.Err != nil && f.Path == "":
			fmt.Fprintf(w, "  %-9s not found (%s)\n", f.Name, f.Command)
		case f.Err != nil:
			fmt.Fprintf(w, "  %-9s %s: %s\n", f.Name, f.Path, firstErrLine(f.Err))
		default:
			fmt.Fprintf(w, "  %-9s %s (%s)\n", f.Name, f.Version, f.Path)
		}
	}
}

func firstErrLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
