package requests

import (
	"context"
	"fmt"

	"ralph/internal/fleet"
	"ralph/internal/serve"
)

// What a request's thread is told as its task goes: the outcome acted on
// once, reminders, the status message kept current.

// report acts once on the outcome of the request's task and keeps its
// status message current.
func (s *Service) report(ctx context.Context, r Request, v serve.TaskView, dir string, at repoAt) error {
	dec := Decide(v)
	c := s.conv(r)
	handled := fmt.Sprintf("%s/%s/%d", v.ID, dec.Outcome, v.LoopCount)
	if following(r) && v.State == fleet.Cancelled {
		// Given up by a person: the pull request is theirs now; a later
		// comment is new work, followed afresh.
		r.PRState = ""
		if err := s.store.Update(r); err != nil {
			return err
		}
		if err := s.store.SettlePR(r.Key); err != nil {
			return err
		}
	}
	ended := (r.PRState == prMerged || r.PRState == prClosed) && v.State.Finished()
	if err := s.gateSync(ctx, r, v); err != nil {
		return err
	}
	if handled != r.Handled && dec.Outcome != Retry && dec.Outcome != Gate && !ended {
		marker := "<!-- ralph:" + handled + " -->"
		switch {
		case dec.Outcome == Complete && r.PRState == prRound:
			if err := s.roundDone(ctx, &r, v, dec, dir, at); err != nil {
				return err
			}
		case dec.Outcome == Review && r.PRState == prRound:
			// A round taken but not started (a crash between): start it.
			if err := s.loopRound(ctx, r); err != nil {
				return err
			}
			return nil
		}
		switch dec.Outcome {
		case Clarify:
			if _, err := c.Post(ctx, r, marker, clarifyText(dec.Questions)); err != nil {
				return err
			}
			r.AskedAt = s.opts.Now()
		case Complete:
			if r.PRState == prReview {
				break // a round's end, published above
			}
			if err := s.complete(ctx, &r, v, dec, dir, at, marker); err != nil {
				return err
			}
			if r.PRNumber > 0 {
				r.PRState = prReview // followed from now on
			}
		case Halt:
			if err := s.halt(ctx, &r, v, dec, dir, at, marker); err != nil {
				return err
			}
		}
		r.Handled = handled
		if err := s.store.Update(r); err != nil {
			return err
		}
		s.logf("%s: %s (task %s, loop %d)", r.Key, dec.Outcome, v.ID, v.LoopCount)
	} else if err := s.remind(ctx, &r, dec, handled); err != nil {
		return err
	}
	if r.PRState == prReview && v.State == fleet.Done {
		// The pull request is open: the task waits for its review, its
		// session free for other work.
		if err := s.d.Follow(r.Session, fleet.Waiting, WaitingForReview); err != nil {
			return err
		}
		var err error
		if v, err = s.d.Status(r.Session); err != nil {
			return err
		}
		dec = Decide(v)
	}
	return s.status(ctx, r, v, dec)
}

// remind posts one reminder of the questions a request has waited on
// for longer than RALPH_REQUEST_REMIND. It is looked at on every pass
// (the reconcile tick comes every reconcileEvery); the reminder is
// recorded by the questions' key, so a restart never sends it twice and a
// new question gets one of its own.
func (s *Service) remind(ctx context.Context, r *Request, dec Decision, handled string) error {
	if s.cfg.Remind <= 0 || dec.Outcome != Clarify || r.Handled != handled || r.Reminded == handled {
		return nil
	}
	if r.AskedAt.IsZero() {
		// Asked before ralph kept the time: count from now.
		r.AskedAt = s.opts.Now()
		return s.store.Update(*r)
	}
	if s.opts.Now().Sub(r.AskedAt) < s.cfg.Remind {
		return nil
	}
	marker := "<!-- ralph:remind:" + handled + " -->"
	if _, err := s.conv(*r).Post(ctx, *r, marker, remindText(dec.Questions, s.opts.Now().Sub(r.AskedAt))); err != nil {
		return err
	}
	r.Reminded = handled
	if err := s.store.Update(*r); err != nil {
		return err
	}
	s.logf("%s: reminded of %d question(s)", r.Key, len(dec.Questions))
	return nil
}

// status writes the request's status message, edited in place.
func (s *Service) status(ctx context.Context, r Request, v serve.TaskView, dec Decision) error {
	text := statusText(r, v, dec)
	s.mu.Lock()
	same := s.shown[r.Key] == text
	s.mu.Unlock()
	if same {
		return nil
	}
	c := s.conv(r)
	marker := "<!-- ralph:status:" + r.Key + " -->"
	if r.StatusRef == "" {
		ref, err := c.Post(ctx, r, marker, text)
		if err != nil {
			return err
		}
		r.StatusRef = ref
		if err := s.store.Update(r); err != nil {
			return err
		}
	} else if err := c.Edit(ctx, r, r.StatusRef, marker, text); err != nil {
		return err
	}
	s.mu.Lock()
	s.shown[r.Key] = text
	s.mu.Unlock()
	return nil
}
