package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"ralph/internal/breaker"
	"ralph/internal/config"
	"ralph/internal/control"
	"ralph/internal/engine"
	"ralph/internal/gitx"
	"ralph/internal/loop"
	"ralph/internal/proc"
	"ralph/internal/session"
	"ralph/internal/store"
)

// sessions keeps the files people and the bash tool's readers know in step
// with the agent session, which lives in the loop's state (the core
// decides which session a call resumes, when it expires and when it is
// reset): .claude_session_id and .ralph_session_history. What the manager
// notes (a corrupt file moved aside) goes to warn: the README promises the
// user hears about a file set aside.
type sessions struct {
	m    *session.Manager
	warn func(string)
}

func newSessions(st *store.Store) *sessions {
	return &sessions{m: session.NewManager(st, nil), warn: func(msg string) {
		fmt.Fprintln(os.Stderr, "ralph: warning: session:", safeText(msg))
	}}
}

func (s *sessions) notes(out session.Outcome) {
	for _, n := range out.Notes {
		s.warn(n)
	}
}

func (s *sessions) Changed(c engine.SessionChange) error {
	out, err := s.m.Follow(session.Session{ID: c.To.ID, CreatedAt: c.To.Started}, session.Reason(c.Why), c.Loop)
	s.notes(out)
	return err
}

// sessionStore is a project's store whose state adopts the agent session
// an older ralph kept in .claude_session_id (state version 2 and before):
// the file's session, with its age, becomes the state's. A corrupt file is
// set aside with a warning, as it always was, and the next call starts a
// new session.
type sessionStore struct {
	*store.Store
	warn func(string)
}

func (s sessionStore) LoadState() (loop.State, bool, []string, error) {
	st, found, warns, err := s.Store.LoadState()
	if err != nil || st.Version >= loop.StateVersion {
		return st, found, warns, err
	}
	st.Version = loop.StateVersion
	path := s.AgentSessionFile()
	old, err := session.Load(path)
	var corrupt *store.CorruptError
	switch {
	case errors.As(err, &corrupt):
		moved, rerr := store.Recover(path)
		if rerr != nil {
			s.warn(fmt.Sprintf("%v; and could not move it aside: %v", corrupt, rerr))
		} else {
			s.warn(fmt.Sprintf("%v; moved to %s, starting a new agent session", corrupt, moved))
		}
	case err == nil:
		st = loop.AdoptSession(st, old.ID, old.CreatedAt)
	}
	return st, found, warns, nil
}

func printStatus(ios IO, st *store.Store, asJSON bool) error {
	s, err := store.ReadStatus(st.StatusFile())
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no status yet: %s does not exist (has `ralph run` been started here?)", st.StatusFile())
	}
	if err != nil {
		return err
	}
	// status.json may come from a repository or an older ralph: what it
	// says is masked and stripped of escapes however it was written.
	if asJSON {
		out, flush := redactedWriter(ios.Out)
		defer flush()
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		// stale: the file says a loop runs, but its process is gone (a
		// crash, kill -9); the file's own fields stay as written.
		return enc.Encode(struct {
			store.Status
			Stale bool `json:"stale,omitempty"`
		}{s, statusGone(s, proc.Alive)})
	}
	out, flush := safeWriter(ios.Out)
	defer flush()
	ios.Out = out
	fmt.Fprintf(ios.Out, "status:          %s\n", statusLine(s, proc.Alive, time.Now()))
	if s.ExitReason != "" {
		fmt.Fprintf(ios.Out, "exit reason:     %s\n", s.ExitReason)
	}
	fmt.Fprintf(ios.Out, "loop:            %d\n", s.LoopCount)
	if s.Agent != "" {
		fmt.Fprintf(ios.Out, "agent:           %s\n", s.Agent)
	}
	if r, err := control.Open(st.RalphDir()).Read(); err == nil && (r.Pause || r.Stop) {
		var asked []string
		if r.Pause {
			asked = append(asked, "pause (by "+r.PauseBy+"; `ralph resume` lifts it)")
		}
		if r.Stop {
			asked = append(asked, "stop (by "+r.StopBy+")")
		}
		fmt.Fprintf(ios.Out, "requested:       %s\n", strings.Join(asked, ", "))
	}
	fmt.Fprintf(ios.Out, "calls this hour: %d/%d\n", s.CallsMadeThisHour, s.MaxCallsPerHour)
	fmt.Fprintf(ios.Out, "circuit breaker: %s %s\n", s.Breaker.State, s.Breaker.Reason)
	if s.Wait != nil {
		fmt.Fprintf(ios.Out, "waiting:         %s until %s %s\n", s.Wait.Kind, s.Wait.Until.Local().Format(time.RFC3339), s.Wait.Reason)
	}
	t := s.Totals
	fmt.Fprintf(ios.Out, "totals:          %d in, %d out, %d cache read, %d cache write tokens, $%.4f\n",
		t.InputTokens, t.OutputTokens, t.CacheReadInputTokens, t.CacheCreationInputTokens, t.CostUSD)
	if s.LastAnalysis != "" {
		fmt.Fprintf(ios.Out, "last analysis:   %s\n", s.LastAnalysis)
	}
	for _, q := range s.ClarificationQuestions {
		fmt.Fprintf(ios.Out, "question:        %s\n", q)
	}
	fmt.Fprintf(ios.Out, "updated:         %s\n", s.Timestamp.Local().Format(time.RFC3339))
	return nil
}

// readBreaker reads the breaker from the loop's state document, or from its
// view (.circuit_breaker_state) in a project an older ralph or the bash tool
// last ran.
func readBreaker(st *store.Store) (breaker.State, error) {
	if s, ok, err := st.ReadState(); err == nil && ok {
		return s.Breaker, nil
	}
	var b breaker.State
	err := store.ReadJSON(st.BreakerFile(), &b)
	if errors.Is(err, fs.ErrNotExist) {
		return breaker.New(time.Now()), nil
	}
	if err == nil {
		err = b.Validate()
	}
	return b, err
}

func circuitStatus(ios IO, st *store.Store, cfg config.Config, asJSON bool) error {
	b, err := readBreaker(st)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	fmt.Fprintf(ios.Out, "state:     %s\n", b.Status)
	if b.Message != "" {
		fmt.Fprintf(ios.Out, "reason:    %s\n", b.Message)
	}
	fmt.Fprintf(ios.Out, "counters:  no progress %d/%d, same error %d/%d, permission denials %d/%d, failures %d/%d\n",
		b.NoProgress, cfg.Breaker.NoProgressThreshold, b.SameError, cfg.Breaker.SameErrorThreshold,
		b.PermissionDenials, cfg.Breaker.PermissionDenialThreshold, b.Failures, cfg.Breaker.FailureThreshold)
	if b.Status == breaker.Open {
		th := breaker.Thresholds{Cooldown: cfg.Breaker.Cooldown}
		fmt.Fprintf(ios.Out, "half-open: after %s (or `ralph circuit reset`)\n", b.ResumeAt(th).Local().Format(time.RFC3339))
	}
	return nil
}

// circuitReset closes the breaker. A running loop keeps its breaker in
// memory and would overwrite a file written under it, so it is asked
// instead (through the control file) and applies the reset before its next
// call; otherwise the state document is changed here.
func circuitReset(ios IO, st *store.Store, why string) error {
	now := time.Now()
	lock, err := st.Lock()
	var held *store.LockedError
	if errors.As(err, &held) {
		id := strconv.FormatInt(now.UnixNano(), 36)
		if err := control.Open(st.RalphDir()).RequestReset(id, "ralph circuit reset", why, now); err != nil {
			return err
		}
		fmt.Fprintln(ios.Out, "circuit breaker: reset requested; the running loop closes it before its next call")
		return nil
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	s, _, warns, err := st.LoadState()
	if err != nil {
		return err
	}
	for _, w := range warns {
		fmt.Fprintln(ios.Err, "ralph: warning:", w)
	}
	s, _, _ = loop.ResetBreaker(s, now.UTC().Round(0), loop.BreakerReset{By: "ralph circuit reset", Why: why})
	if err := st.SaveState(s, nil); err != nil {
		return err
	}
	fmt.Fprintln(ios.Out, "circuit breaker: CLOSED")
	return nil
}

// sessionReset forgets the agent session. It lives in the loop's state: a
// running loop is asked (through the control file) and forgets it before
// its next call; otherwise the state document is changed here.
func sessionReset(ios IO, st *store.Store, _ string) error {
	now := time.Now()
	lock, err := st.Lock()
	var held *store.LockedError
	switch {
	case errors.As(err, &held):
		if err := control.Open(st.RalphDir()).RequestSessionReset(now); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		defer lock.Release()
		s, found, warns, err := sessionStore{st, func(msg string) { fmt.Fprintln(ios.Err, "ralph: warning: session:", safeText(msg)) }}.LoadState()
		if err != nil {
			return err
		}
		for _, w := range warns {
			fmt.Fprintln(ios.Err, "ralph: warning:", w)
		}
		if found {
			if err := st.SaveState(loop.ForgetSession(s), nil); err != nil {
				return err
			}
		}
		if _, err := session.NewManager(st, nil).Reset(session.ReasonManual, s.Loop); err != nil {
			return err
		}
	}
	fmt.Fprintln(ios.Out, "agent session reset: the next call starts a new session")
	return nil
}

func rollback(ctx context.Context, ios IO, dir string) error {
	backups, err := gitx.ListBackups(ctx, dir)
	if err != nil {
		return err
	}
	if len(backups) == 0 {
		return fmt.Errorf("no backups in %s (run with --backup to make them)", dir)
	}
	last := backups[len(backups)-1]
	// The current state is backed up first (SafetyRef), so a rollback over
	// uncommitted changes loses nothing.
	res, err := gitx.Rollback(ctx, dir, last.Ref, true)
	if err != nil {
		return fmt.Errorf("rollback to %s: %w", last.Ref, err)
	}
	fmt.Fprintf(ios.Out, "restored the working tree from %s (%s): %d files restored, %d removed\n",
		last.Ref, last.Time.Local().Format(time.RFC3339), len(res.Restored), len(res.Removed))
	if res.SafetyRef != "" {
		fmt.Fprintf(ios.Out, "the state before the rollback is kept in %s\n", res.SafetyRef)
	}
	return nil
}

// notify tells the desktop the loop stopped; with no notifier, the terminal bell.
func notify(title, body string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("osascript", "-e", fmt.Sprintf("display notification %q with title %q", body, title))
	default:
		if p, err := exec.LookPath("notify-send"); err == nil {
			cmd = exec.Command(p, title, body)
		}
	}
	if cmd == nil || cmd.Run() != nil {
		fmt.Fprint(os.Stderr, "\a")
	}
}
