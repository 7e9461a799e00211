package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ralph/internal/agent"
	"ralph/internal/config"
	"ralph/internal/loop"
	"ralph/internal/redact"
	"ralph/internal/sandbox"
)

// verifyTail is how much of the verify command's output the record keeps
// and the next call is shown: the end, where test runners sum up.
const verifyTail = 4 << 10

// verifier runs the project's VERIFY_CMD for the verify gate: through sh,
// as a person types it (`go test ./... && go vet ./...`), in the project,
// confined by bubblewrap where the agent is, with the agent's environment,
// in a process group that dies with ralph and after VERIFY_TIMEOUT. The
// command is the user's or a trusted .ralphrc's (config.NeedsTrust).
func verifier(cfg config.Config, dir string, env []string) func(context.Context) loop.VerifyRun {
	command, timeout := cfg.VerifyCmd, cfg.VerifyTimeout
	box := cfg.Sandbox
	return func(ctx context.Context) loop.VerifyRun {
		start := time.Now()
		run := loop.VerifyRun{Command: command, ExitCode: -1}
		done := func() loop.VerifyRun {
			run.Ended = time.Now().UTC().Round(0)
			run.DurationMS = time.Since(start).Milliseconds()
			return run
		}
		r := &agent.Runner{}
		if box.Provider == sandbox.Bwrap {
			sb, err := sandbox.Open(ctx, sandbox.Spec{Provider: box.Provider, Network: box.Network, Hide: agentHidden()})
			if err != nil {
				run.StartErr = err.Error()
				return done()
			}
			r.Wrap = sb.Wrapper()
		}
		logs, err := os.MkdirTemp("", "ralph-verify-")
		if err != nil {
			run.StartErr = err.Error()
			return done()
		}
		defer os.RemoveAll(logs)
		out, errs := filepath.Join(logs, "stdout"), filepath.Join(logs, "stderr")
		res, err := r.Run(ctx, agent.Process{Argv: []string{"/bin/sh", "-c", command}, Dir: dir, Env: env,
			StdoutPath: out, StderrPath: errs, Timeout: timeout})
		if err != nil && res.StartErr == nil {
			run.StartErr = err.Error()
			return done()
		}
		if res.StartErr != nil {
			run.StartErr = res.StartErr.Error()
			return done()
		}
		run.ExitCode, run.TimedOut = res.ExitCode, res.TimedOut
		var tail []string
		for _, p := range []string{out, errs} {
			if b, err := agent.ReadTail(p, verifyTail/2); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				tail = append(tail, strings.TrimSpace(string(b)))
			}
		}
		run.Tail = redact.String(strings.Join(tail, "\n"))
		return done()
	}
}
