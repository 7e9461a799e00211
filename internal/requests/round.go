package requests

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"ralph/internal/analyze"
	"ralph/internal/fleet"
	"ralph/internal/redact"
	"ralph/internal/serve"
	"ralph/internal/taskfile"
)

// A follow-up round: what came in on the pull request while it waited for
// review goes to the same task's loop, on the same branch; when the loop
// is done, ralph pushes, answers each review thread and resolves those the
// agent addressed, and the task waits for review again.

// startRound starts a follow-up round with fresh (the request's entries
// not yet acted on), unless the cap on rounds is reached: then ralph says
// so once on the pull request and takes nothing more. Checks and conflicts
// about an older head are dropped; a conflict git merges alone is pushed
// without a round.
func (s *Service) startRound(ctx context.Context, r *Request, fresh []Entry, dir string, at repoAt) error {
	pr, err := s.hub.Pull(ctx, r.Repo, r.PRNumber)
	if err != nil {
		return err
	}
	head := pr.GetHead().GetSHA()
	var take, drop []string
	conflict := false
	for _, e := range fresh {
		if current(e, head) {
			take = append(take, e.ID)
			conflict = conflict || e.Kind == kindConflict
		} else {
			drop = append(drop, e.ID)
		}
	}
	if err := s.store.MarkActed(r.Key, drop); err != nil || len(take) == 0 {
		return err
	}
	if r.Rounds >= s.cfg.FollowupRounds {
		marker := fmt.Sprintf("<!-- ralph:cap:%s -->", r.Key)
		text := fmt.Sprintf("ralph has done %d follow-up round(s) on this pull request, its cap (`RALPH_PR_FOLLOWUP_ROUNDS`): what comes now is over to you.", r.Rounds)
		if _, err := s.hub.Comment(ctx, r.Repo, r.PRNumber, marker, text); err != nil {
			return err
		}
		if s.once("cap:" + r.Key) {
			s.logf("%s: follow-up cap of %d round(s) reached; %d new item(s) not taken", r.Key, s.cfg.FollowupRounds, len(take))
		}
		return s.store.MarkActed(r.Key, take)
	}
	if conflict {
		clean, err := s.ws.mergeBase(ctx, dir, at.cloneURL, at.base)
		if err != nil {
			return err
		}
		if clean && len(take) == 1 {
			// Nothing for the agent: the merge is the whole round.
			if _, err := s.ws.publish(ctx, dir, at.cloneURL, at.base, r.Branch, ""); err != nil {
				return err
			}
			s.logf("%s: merged %s into %s", r.Key, at.base, r.Branch)
			return s.store.MarkActed(r.Key, take)
		}
	}
	v, err := s.d.Status(r.Session)
	if err != nil {
		return err
	}
	n := r.Rounds + 1
	if err := addRoundItem(v.TaskFile, n); err != nil {
		return err
	}
	r.Rounds, r.PRState = n, prRound
	if err := s.store.Update(*r); err != nil {
		return err
	}
	if err := s.store.TakeIntoRound(r.Key, take, n); err != nil {
		return err
	}
	s.logf("%s: follow-up round %d on pull request #%d (%d item(s))", r.Key, n, r.PRNumber, len(take))
	return s.loopRound(ctx, *r)
}

// loopRound loops the request's task for its round.
func (s *Service) loopRound(ctx context.Context, r Request) error {
	_, err := s.d.Do(ctx, fleet.Command{Verb: fleet.Retry, Session: r.Session, MaxLoops: s.cfg.MaxLoops,
		Who: fleet.Who{Surface: fleet.SurfaceGitHub, User: "pull-request"}})
	return err
}

// addRoundItem gives the task file an open item for round n, so that a
// checklist the agent ticked to the end does not end the round before it
// starts.
func addRoundItem(path string, n int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, taskfile.AddItem(data, fmt.Sprintf("Follow-up round %d: address what the pull request's reviewers, checks or base branch raised (see the request)", n)), 0o644)
}

// roundDone publishes a finished round: the commits pushed to the pull
// request's branch, a reply in each review thread of the round — what
// changed where the agent addressed it, why not where it did not — and the
// addressed threads resolved, a note in the pull request's conversation;
// then the task waits for review again.
func (s *Service) roundDone(ctx context.Context, r *Request, v serve.TaskView, dec Decision, dir string, at repoAt) error {
	msg := fmt.Sprintf("ralph: follow-up round %d on #%d", r.Rounds, r.PRNumber)
	if _, err := s.ws.publish(ctx, dir, at.cloneURL, at.base, r.Branch, msg); err != nil {
		return err
	}
	head := s.ws.head(ctx, dir, at.cloneURL)
	short := head
	if len(short) > 7 {
		short = short[:7]
	}
	entries, err := s.store.Entries(r.Key)
	if err != nil {
		return err
	}
	var block map[string]string
	if n := len(v.History); n > 0 {
		block = v.History[n-1].StatusBlock
	}
	addressed := threadsAddressed(block, entries, r.Rounds)
	threads, err := s.hub.ReviewThreads(ctx, r.Repo, r.PRNumber)
	if err != nil {
		return err
	}
	summary := strings.TrimSpace(dec.Summary)
	if summary == "" {
		summary = "see the commit"
	}
	replied := map[int64]bool{}
	for _, e := range entries {
		if e.Round != r.Rounds || e.Kind != kindReviewComment || e.Thread == 0 || replied[e.Thread] {
			continue
		}
		replied[e.Thread] = true
		marker := fmt.Sprintf("<!-- ralph:reply:%s:%d:%d -->", r.Key, r.Rounds, e.Thread)
		text := fmt.Sprintf("Not changed in follow-up round %d: %s", r.Rounds, summary)
		if addressed[e.Thread] {
			text = fmt.Sprintf("Addressed in %s (follow-up round %d): %s", short, r.Rounds, summary)
		}
		if err := s.hub.Reply(ctx, r.Repo, r.PRNumber, e.Thread, marker, redact.String(text)); err != nil {
			return err
		}
		if t, ok := threads[e.Thread]; ok && addressed[e.Thread] && !t.Resolved {
			if err := s.hub.ResolveThread(ctx, t.ID); err != nil {
				return err
			}
		}
	}
	marker := fmt.Sprintf("<!-- ralph:round:%s:%d -->", r.Key, r.Rounds)
	note := fmt.Sprintf("🔁 Follow-up round %d pushed (%s): %s", r.Rounds, short, summary)
	if _, err := s.hub.Comment(ctx, r.Repo, r.PRNumber, marker, redact.String(note)); err != nil {
		return err
	}
	c := lastCheck(v)
	if _, _, err := s.pullRequest(ctx, r, at.base, "", false, c.verified); err != nil {
		return err
	}
	r.PRState = prReview
	s.logf("%s: follow-up round %d pushed to pull request #%d", r.Key, r.Rounds, r.PRNumber)
	return nil
}

// threadsAddressed is the review threads of round n the agent addressed:
// those its last status block names (REVIEW_THREADS_ADDRESSED), or, where
// it named none, every thread of the round.
func threadsAddressed(block map[string]string, entries []Entry, n int) map[int64]bool {
	var round []int64
	for _, e := range entries {
		if e.Round == n && e.Kind == kindReviewComment && e.Thread != 0 && !slices.Contains(round, e.Thread) {
			round = append(round, e.Thread)
		}
	}
	ids, given := analyze.ThreadsAddressed(block)
	out := map[int64]bool{}
	for _, t := range round {
		out[t] = !given || slices.Contains(ids, t)
	}
	return out
}
