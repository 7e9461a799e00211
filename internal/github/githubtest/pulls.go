package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What reviewers and CI leave on a pull request, in GitHub's wire format:
// reviews, review comments (threads of them, replied to and resolved),
// check runs and commit statuses on its head, whether it merges cleanly,
// and its end (merged or closed).

// Review is a submitted review.
type Review struct {
	ID     int64
	Author string
	// State is APPROVED, CHANGES_REQUESTED or COMMENTED.
	State string
	Body  string
}

// ReviewComment is a comment on a line of the diff; one with InReplyTo
// answers the thread that comment started.
type ReviewComment struct {
	ID        int64
	Author    string
	Body      string
	Path      string
	Line      int
	InReplyTo int64
	Created   time.Time
}

// CheckRun is a check on a commit: Conclusion is success, failure,
// timed_out, … once completed ("" while it runs).
type CheckRun struct {
	Name       string
	Conclusion string
	Title      string
	Summary    string
}

// Status is a commit status: state success, failure, error or pending.
type Status struct {
	Context     string
	State       string
	Description string
}

// pullRoute serves GET pulls/{n}, its reviews, its review comments and
// the replies to them; false (nothing written) for any other route.
func (s *Server) pullRoute(w http.ResponseWriter, r *http.Request, repo string, rest []string) bool {
	n, err := strconv.Atoi(rest[1])
	if err != nil {
		return false
	}
	k := slices.IndexFunc(s.pulls[repo], func(p Pull) bool { return p.Number == n })
	switch {
	case len(rest) == 2 && r.Method == http.MethodGet:
	case len(rest) == 3 && (rest[2] == "reviews" || rest[2] == "comments") && r.Method == http.MethodGet:
	case len(rest) == 5 && rest[2] == "comments" && rest[4] == "replies" && r.Method == http.MethodPost:
	default:
		return false
	}
	if k < 0 {
		fail(w, http.StatusNotFound, "Not Found")
		return true
	}
	pr := &s.pulls[repo][k]
	switch {
	case len(rest) == 2:
		writeJSON(w, s.pullJSON(repo, *pr))
	case rest[2] == "reviews":
		out := []any{}
		for _, rv := range pr.Reviews {
			out = append(out, map[string]any{"id": rv.ID, "node_id": fmt.Sprintf("PRR_%d", rv.ID), "user": map[string]any{"login": rv.Author},
				"body": rv.Body, "state": rv.State, "submitted_at": time.Now().UTC().Format(time.RFC3339),
				"html_url": fmt.Sprintf("https://github.com/%s/pull/%d#pullrequestreview-%d", repo, n, rv.ID)})
		}
		writeJSON(w, out)
	case len(rest) == 3:
		out := []any{}
		for _, c := range pr.ReviewComments {
			out = append(out, reviewCommentJSON(repo, n, c))
		}
		writeJSON(w, out)
	default:
		id, _ := strconv.ParseInt(rest[3], 10, 64)
		i := slices.IndexFunc(pr.ReviewComments, func(c ReviewComment) bool { return c.ID == id })
		var in struct{ Body string }
		if i < 0 || json.NewDecoder(r.Body).Decode(&in) != nil || in.Body == "" {
			fail(w, http.StatusNotFound, "Not Found")
			return true
		}
		root := pr.ReviewComments[i]
		if root.InReplyTo != 0 {
			root.ID = root.InReplyTo // a reply to a reply answers the thread
		}
		s.nextID++
		c := ReviewComment{ID: 7000 + s.nextID, Author: s.login(), Body: in.Body, Path: root.Path, Line: root.Line, InReplyTo: root.ID, Created: time.Now().UTC()}
		pr.ReviewComments = append(pr.ReviewComments, c)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, reviewCommentJSON(repo, n, c))
	}
	return true
}

func reviewCommentJSON(repo string, n int, c ReviewComment) map[string]any {
	m := map[string]any{"id": c.ID, "node_id": fmt.Sprintf("PRRC_%d", c.ID), "user": map[string]any{"login": c.Author},
		"body": c.Body, "path": c.Path, "line": c.Line, "created_at": c.Created.UTC().Format(time.RFC3339),
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d#discussion_r%d", repo, n, c.ID)}
	if c.InReplyTo != 0 {
		m["in_reply_to_id"] = c.InReplyTo
	}
	return m
}

// commitChecks serves commits/{ref}/check-runs and commits/{ref}/status.
func (s *Server) commitChecks(w http.ResponseWriter, repo, ref, what string) {
	key := repo + "@" + ref
	if what == "check-runs" {
		out := []any{}
		for i, c := range s.checks[key] {
			status := "completed"
			if c.Conclusion == "" {
				status = "in_progress"
			}
			out = append(out, map[string]any{"id": i + 1, "name": c.Name, "head_sha": ref, "status": status, "conclusion": nullable(c.Conclusion),
				"output": map[string]any{"title": c.Title, "summary": c.Summary}})
		}
		writeJSON(w, map[string]any{"total_count": len(out), "check_runs": out})
		return
	}
	out := []any{}
	state := "success"
	for _, st := range s.statuses[key] {
		out = append(out, map[string]any{"context": st.Context, "state": st.State, "description": st.Description})
		if st.State != "success" && state != "failure" {
			state = map[bool]string{true: "failure", false: "pending"}[st.State == "failure" || st.State == "error"]
		}
	}
	if len(out) == 0 {
		state = "pending"
	}
	writeJSON(w, map[string]any{"state": state, "sha": ref, "total_count": len(out), "statuses": out})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// sha is a branch's commit in the repository's clone_url when that is a
// local repository ("" otherwise): the fake reads what was pushed.
func (s *Server) sha(repo, branch string) string {
	dir := s.data.CloneURLs[repo]
	if dir == "" || strings.Contains(dir, "://") {
		return ""
	}
	out, err := exec.Command("git", "--git-dir", dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// mergeable says whether head merges into base without a conflict, as
// git's merge-tree finds; known is false where the fake cannot tell.
func (s *Server) mergeable(repo, base, head string) (ok, known bool) {
	dir := s.data.CloneURLs[repo]
	if s.sha(repo, base) == "" || s.sha(repo, head) == "" {
		return false, false
	}
	err := exec.Command("git", "--git-dir", dir, "merge-tree", "--write-tree", "--no-messages", "refs/heads/"+base, "refs/heads/"+head).Run()
	if ee, isExit := err.(*exec.ExitError); isExit && ee.ExitCode() == 1 {
		return false, true
	}
	return err == nil, err == nil
}

// threadID is a review thread's global id: the thread of its first
// comment.
func threadID(repo string, pr int, root int64) string {
	return "PRRT_" + base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s#%d#%d", repo, pr, root))
}

// AddReview submits a review on a pull request and returns its id.
func (s *Server) AddReview(repo string, pr int, rv Review) int64 {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	s.nextID++
	rv.ID = 6000 + s.nextID
	for k := range s.pulls[repo] {
		if p := &s.pulls[repo][k]; p.Number == pr {
			p.Reviews = append(p.Reviews, rv)
		}
	}
	return rv.ID
}

// AddReviewComment comments on a line of a pull request's diff (a reply
// when c.InReplyTo is set) and returns the comment's id.
func (s *Server) AddReviewComment(repo string, pr int, c ReviewComment) int64 {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	s.nextID++
	c.ID = 7000 + s.nextID
	if c.Created.IsZero() {
		c.Created = time.Now().UTC()
	}
	for k := range s.pulls[repo] {
		if p := &s.pulls[repo][k]; p.Number == pr {
			p.ReviewComments = append(p.ReviewComments, c)
		}
	}
	return c.ID
}

// ReviewComments returns a pull request's review comments, replies
// included.
func (s *Server) ReviewComments(repo string, pr int) []ReviewComment {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	for _, p := range s.pulls[repo] {
		if p.Number == pr {
			return slices.Clone(p.ReviewComments)
		}
	}
	return nil
}

// Resolved says whether the review thread that comment root started is
// resolved.
func (s *Server) Resolved(repo string, pr int, root int64) bool {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return s.resolved[threadID(repo, pr, root)]
}

// AddCheckRun reports a check run on a commit.
func (s *Server) AddCheckRun(repo, sha string, c CheckRun) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.checks == nil {
		s.checks = map[string][]CheckRun{}
	}
	s.checks[repo+"@"+sha] = append(s.checks[repo+"@"+sha], c)
}

// AddStatus sets a commit status.
func (s *Server) AddStatus(repo, sha string, st Status) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.statuses == nil {
		s.statuses = map[string][]Status{}
	}
	s.statuses[repo+"@"+sha] = append(s.statuses[repo+"@"+sha], st)
}

// HeadSHA is the commit a pull request's head branch points at.
func (s *Server) HeadSHA(repo string, pr int) string {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	for _, p := range s.pulls[repo] {
		if p.Number == pr {
			return s.sha(repo, p.Head)
		}
	}
	return ""
}

// Merge merges a pull request (closed, merged); Close closes it unmerged.
func (s *Server) Merge(repo string, pr int) { s.end(repo, pr, true) }

// Close closes a pull request without merging it.
func (s *Server) Close(repo string, pr int) { s.end(repo, pr, false) }

func (s *Server) end(repo string, pr int, merged bool) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	for k := range s.pulls[repo] {
		if p := &s.pulls[repo][k]; p.Number == pr {
			p.State, p.Merged = "closed", merged
		}
	}
}
