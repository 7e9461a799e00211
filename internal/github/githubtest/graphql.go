package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// GitHub's GraphQL API, the little of it ralph uses, which REST cannot
// do: the mutation that marks a draft pull request ready for review, a
// pull request's review threads, and the mutation that resolves one. It
// answers as GitHub does: 200 with {"data": …} or {"errors": [...]}.

// nodeID is a pull request's global id, opaque to clients.
func nodeID(repo string, number int) string {
	return "PR_" + base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s#%d", repo, number))
}

// graphql serves POST …/graphql; s.dmu is held.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	var in struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Query == "" {
		fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	gqlError := func(msg string) { writeJSON(w, map[string]any{"errors": []any{map[string]any{"message": msg}}}) }
	switch {
	case strings.Contains(in.Query, "resolveReviewThread"):
		s.resolveThread(w, in.Variables, gqlError)
		return
	case strings.Contains(in.Query, "reviewThreads"):
		s.reviewThreads(w, in.Variables, gqlError)
		return
	case !strings.Contains(in.Query, "markPullRequestReadyForReview"):
		gqlError("this fake answers markPullRequestReadyForReview, reviewThreads and resolveReviewThread only")
		return
	}
	id, _ := in.Variables["id"].(string)
	for repo, pulls := range s.pulls {
		for k, pr := range pulls {
			if nodeID(repo, pr.Number) != id {
				continue
			}
			pr.Draft = false
			s.pulls[repo][k] = pr
			s.readied = append(s.readied, pr.Number)
			writeJSON(w, map[string]any{"data": map[string]any{"markPullRequestReadyForReview": map[string]any{
				"pullRequest": map[string]any{"number": pr.Number, "isDraft": false}}}})
			return
		}
	}
	gqlError(fmt.Sprintf("Could not resolve to a node with the global id of '%s'.", id))
}

// Readied lists the pull requests marked ready for review, in order.
func (s *Server) Readied() []int {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return append([]int(nil), s.readied...)
}

// reviewThreads answers repository(owner, name).pullRequest(number)
// .reviewThreads: each thread's id, whether it is resolved, and its
// comments' databaseId (the REST id).
func (s *Server) reviewThreads(w http.ResponseWriter, vars map[string]any, gqlError func(string)) {
	owner, _ := vars["owner"].(string)
	name, _ := vars["name"].(string)
	number, _ := vars["number"].(float64)
	repo := owner + "/" + name
	for _, pr := range s.pulls[repo] {
		if pr.Number != int(number) {
			continue
		}
		threads := []any{}
		byRoot := map[int64][]any{}
		var roots []int64
		for _, c := range pr.ReviewComments {
			root := c.ID
			if c.InReplyTo != 0 {
				root = c.InReplyTo
			} else {
				roots = append(roots, root)
			}
			byRoot[root] = append(byRoot[root], map[string]any{"databaseId": c.ID, "author": map[string]any{"login": c.Author}, "body": c.Body})
		}
		for _, root := range roots {
			id := threadID(repo, pr.Number, root)
			threads = append(threads, map[string]any{"id": id, "isResolved": s.resolved[id],
				"comments": map[string]any{"nodes": byRoot[root]}})
		}
		writeJSON(w, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
			"reviewThreads": map[string]any{"nodes": threads, "pageInfo": map[string]any{"hasNextPage": false, "endCursor": nil}}}}}})
		return
	}
	gqlError(fmt.Sprintf("Could not resolve to a PullRequest with the number of %d.", int(number)))
}

// resolveThread is the resolveReviewThread mutation.
func (s *Server) resolveThread(w http.ResponseWriter, vars map[string]any, gqlError func(string)) {
	id, _ := vars["id"].(string)
	for repo, pulls := range s.pulls {
		for _, pr := range pulls {
			for _, c := range pr.ReviewComments {
				if c.InReplyTo == 0 && threadID(repo, pr.Number, c.ID) == id {
					if s.resolved == nil {
						s.resolved = map[string]bool{}
					}
					s.resolved[id] = true
					writeJSON(w, map[string]any{"data": map[string]any{"resolveReviewThread": map[string]any{
						"thread": map[string]any{"id": id, "isResolved": true}}}})
					return
				}
			}
		}
	}
	gqlError(fmt.Sprintf("Could not resolve to a node with the global id of '%s'.", id))
}
