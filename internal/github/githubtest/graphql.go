package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// GitHub's GraphQL API, the little of it ralph uses: the mutation that
// marks a draft pull request ready for review, which REST cannot do. It
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
	if !strings.Contains(in.Query, "markPullRequestReadyForReview") {
		gqlError("this fake answers markPullRequestReadyForReview only")
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
