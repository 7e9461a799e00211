package requests

import (
	"context"
	"fmt"
	"strings"

	"ralph/internal/fleet"
)

// Following a request's pull request: what reviewers, CI and the base
// branch say of it after it opened (entries of the request, kinds below)
// becomes a follow-up round of the same task on the same branch; between
// rounds the task waits for review, and the pull request's end ends it.

// Kinds of entries seen on a pull request.
const (
	kindReview        = "review"         // a review that requests changes
	kindReviewComment = "review_comment" // a comment on a line of the diff
	kindPRComment     = "pr_comment"     // a comment in the pull request's conversation
	kindCheck         = "check"          // a failing check run or commit status on the head
	kindConflict      = "conflict"       // the head does not merge into the base
	kindEnd           = "end"            // the pull request was merged or closed (never a round's input)
)

// Where following a pull request is (Request.PRState).
const (
	prReview = "review" // waiting for review: what comes is a new round
	prRound  = "round"  // a follow-up round runs
	prMerged = "merged"
	prClosed = "closed"
)

// WaitingForReview is the task's message between rounds: what every
// surface shows of a request whose pull request waits for review.
const WaitingForReview = "waiting for review"

// following says whether r's pull request is open and followed.
func following(r Request) bool {
	return r.PRNumber > 0 && (r.PRState == prReview || r.PRState == prRound)
}

// fromPR says whether an entry came from the pull request (not the
// request's own thread).
func fromPR(e Entry) bool { return e.Kind != "" }

// sighting is one thing seen on a pull request, before it is judged.
type sighting struct {
	Kind   string
	Author string
	Body   string
	// State is a review's state (CHANGES_REQUESTED, …) or a check's
	// conclusion (failure, …).
	State string
}

// byPerson says whether a kind is something a person wrote: only a
// writer's counts, and never ralph's own.
func byPerson(kind string) bool {
	return kind == kindReview || kind == kindReviewComment || kind == kindPRComment
}

// isInput decides whether what was seen on ralph's pull request becomes
// input of a follow-up round: a changes-requested review, a review comment
// or a conversation comment from someone who may write to the repository
// (never ralph's own: its login, or its marker); a failing check or
// status; a conflict with the base. self is ralph's login, canWrite the
// author's permission (read only for a person's kinds).
func isInput(x sighting, self string, canWrite bool) bool {
	switch x.Kind {
	case kindCheck:
		return checkFailed(x.State)
	case kindConflict:
		return true
	}
	if !byPerson(x.Kind) || strings.EqualFold(x.Author, self) || strings.Contains(x.Body, "<!-- ralph:") || !canWrite {
		return false
	}
	if x.Kind == kindReview {
		return strings.EqualFold(x.State, "CHANGES_REQUESTED")
	}
	return strings.TrimSpace(x.Body) != ""
}

// checkFailed says whether a check run's conclusion or a commit status's
// state is a failure to act on (a cancelled or skipped check is not).
func checkFailed(conclusion string) bool {
	switch strings.ToLower(conclusion) {
	case "failure", "timed_out", "action_required", "startup_failure", "error":
		return true
	}
	return false
}

// followPR reads r's pull request and records what is new on it as
// entries (the poll and every webhook about it come here, so a webhook's
// payload is a nudge, never trusted input); a merged or closed pull
// request is recorded as its end. It writes entries only: the request
// itself is process's to change, one pass at a time.
func (s *Service) followPR(ctx context.Context, r Request) error {
	if !following(r) {
		return nil
	}
	pr, err := s.hub.Pull(ctx, r.Repo, r.PRNumber)
	if err != nil {
		return err
	}
	if pr.GetState() == "closed" {
		end := "closed"
		if pr.GetMerged() {
			end = "merged"
		}
		added, err := s.store.AddEntry(r.Key, Entry{ID: fmt.Sprintf("end:%d", r.PRNumber), Kind: kindEnd, Body: end, At: s.opts.Now()})
		if added {
			s.poke(r.Key)
		}
		return err
	}
	self, err := s.hub.Self(ctx)
	if err != nil {
		return err
	}
	var seen []Entry
	person := func(x sighting, e Entry) {
		write := false
		if byPerson(x.Kind) && !strings.EqualFold(x.Author, self) {
			ok, err := s.hub.CanWrite(ctx, r.Repo, x.Author)
			write = err == nil && ok
		}
		if isInput(x, self, write) {
			e.Kind, e.Author = x.Kind, x.Author
			seen = append(seen, e)
		}
	}
	reviews, err := s.hub.Reviews(ctx, r.Repo, r.PRNumber)
	if err != nil {
		return err
	}
	for _, rv := range reviews {
		body := rv.GetBody()
		if strings.TrimSpace(body) == "" {
			body = "(changes requested, see the review comments)"
		}
		person(sighting{Kind: kindReview, Author: rv.GetUser().GetLogin(), Body: rv.GetBody(), State: rv.GetState()},
			Entry{ID: fmt.Sprintf("review:%d", rv.GetID()), Body: body, At: rv.GetSubmittedAt().Time})
	}
	rcs, err := s.hub.ReviewComments(ctx, r.Repo, r.PRNumber)
	if err != nil {
		return err
	}
	for _, c := range rcs {
		root := c.GetInReplyTo()
		if root == 0 {
			root = c.GetID()
		}
		line := c.GetLine()
		if line == 0 {
			line = c.GetOriginalLine()
		}
		person(sighting{Kind: kindReviewComment, Author: c.GetUser().GetLogin(), Body: c.GetBody()},
			Entry{ID: fmt.Sprintf("rc:%d", c.GetID()), Body: c.GetBody(), Ref: fmt.Sprintf("%s:%d", c.GetPath(), line), Thread: root, At: c.GetCreatedAt().Time})
	}
	pcs, err := s.hub.Comments(ctx, r.Repo, r.PRNumber)
	if err != nil {
		return err
	}
	for _, c := range pcs {
		person(sighting{Kind: kindPRComment, Author: c.GetUser().GetLogin(), Body: c.GetBody()},
			Entry{ID: fmt.Sprintf("pc:%d", c.GetID()), Body: c.GetBody(), At: c.GetCreatedAt().Time})
	}
	head := pr.GetHead().GetSHA()
	if head != "" {
		checks, err := s.hub.FailedChecks(ctx, r.Repo, head)
		if err != nil {
			return err
		}
		for _, c := range checks {
			seen = append(seen, Entry{ID: fmt.Sprintf("check:%s:%s", head, c.Name), Kind: kindCheck, Ref: c.Name,
				Body: strings.TrimSpace(c.Conclusion + "\n" + c.Summary), At: s.opts.Now()})
		}
		if m, known := pr.Mergeable, pr.Mergeable != nil; known && !*m {
			seen = append(seen, Entry{ID: fmt.Sprintf("conflict:%s:%s", head, pr.GetBase().GetSHA()), Kind: kindConflict,
				Ref: pr.GetBase().GetRef(), Body: "The branch does not merge cleanly into " + pr.GetBase().GetRef() + ".", At: s.opts.Now()})
		}
	}
	added := false
	for _, e := range seen {
		ok, err := s.store.AddEntry(r.Key, e)
		if err != nil {
			return err
		}
		if ok {
			added = true
			s.logf("%s: %s on pull request #%d (%s)", r.Key, e.Kind, r.PRNumber, e.ID)
		}
	}
	if added {
		s.poke(r.Key)
	}
	return nil
}

// current says whether a check or conflict entry is about head (the pull
// request's head now): one about an older head is stale.
func current(e Entry, head string) bool {
	if e.Kind != kindCheck && e.Kind != kindConflict {
		return true
	}
	return head != "" && strings.HasPrefix(e.ID, e.Kind+":"+head+":")
}

// endPR ends a request whose pull request was merged (its task done) or
// closed unmerged (its task cancelled), once its running round is over;
// ended is false while it runs.
func (s *Service) endPR(ctx context.Context, r *Request, e Entry) (ended bool, err error) {
	if v, err := s.d.Status(r.Session); err == nil && (v.State == fleet.Running || v.State == fleet.Queued) {
		return false, nil
	}
	state, msg, to := fleet.Cancelled, "pull request closed without merging", prClosed
	if e.Body == "merged" {
		state, msg, to = fleet.Done, "pull request merged", prMerged
	}
	if err := s.d.Follow(r.Session, state, msg); err != nil {
		return false, err
	}
	r.PRState = to
	if err := s.store.Update(*r); err != nil {
		return false, err
	}
	s.logf("%s: %s (#%d)", r.Key, msg, r.PRNumber)
	return true, s.store.SettlePR(r.Key)
}
