package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pull is a pull request the fake holds.
type Pull struct {
	Number int
	Title  string
	Body   string
	Head   string // branch name
	Base   string
	State  string
	Draft  bool
	// Merged is set by Merge; a closed pull request that is not merged
	// was closed unmerged.
	Merged bool
	// Reviews and ReviewComments are what reviewers left (pulls.go).
	Reviews        []Review
	ReviewComments []ReviewComment
}

// The endpoints requests use, in GitHub's wire format: who the token is,
// a repository (clone_url), a collaborator's permission, comments (create,
// edit) and pull requests (list by head, create, edit).

// write serves the request endpoints; false when p is not one of them.
// s.dmu is held.
func (s *Server) write(w http.ResponseWriter, r *http.Request, p []string) bool {
	switch {
	case len(p) == 1 && p[0] == "user" && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"login": s.login(), "id": 1, "type": "Bot"})
		return true
	case len(p) < 3 || p[0] != "repos":
		return false
	}
	name := p[1] + "/" + p[2]
	issues, known := s.data.Repos[name]
	if !known {
		return false
	}
	rest := p[3:]
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"id": 1, "name": p[2], "full_name": name, "owner": map[string]any{"login": p[1]},
			"clone_url": s.data.CloneURLs[name], "default_branch": s.defaultBranch(), "private": false})
	case len(rest) == 3 && rest[0] == "collaborators" && rest[2] == "permission" && r.Method == http.MethodGet:
		perm := s.data.Permissions[name+"/"+rest[1]]
		if perm == "" {
			perm = "none"
		}
		// GitHub folds maintain into write and triage into read in
		// "permission"; role_name keeps the fine one.
		coarse := map[string]string{"maintain": "write", "triage": "read"}[perm]
		if coarse == "" {
			coarse = perm
		}
		writeJSON(w, map[string]any{"permission": coarse, "role_name": perm, "user": map[string]any{"login": rest[1]}})
	case len(rest) == 3 && rest[0] == "issues" && rest[2] == "comments" && r.Method == http.MethodPost:
		n, _ := strconv.Atoi(rest[1])
		i := slices.IndexFunc(issues, func(is Issue) bool { return is.Number == n })
		var in struct{ Body string }
		if i < 0 || json.NewDecoder(r.Body).Decode(&in) != nil {
			fail(w, http.StatusNotFound, "Not Found")
			return true
		}
		c := s.addComment(name, i, s.login(), in.Body)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, commentJSON(name, n, c))
	case len(rest) == 3 && rest[0] == "issues" && rest[1] == "comments" && r.Method == http.MethodPatch:
		id, _ := strconv.ParseInt(rest[2], 10, 64)
		var in struct{ Body string }
		if json.NewDecoder(r.Body).Decode(&in) != nil {
			fail(w, http.StatusUnprocessableEntity, "Problems parsing JSON")
			return true
		}
		for k := range issues {
			for j := range issues[k].Comments {
				if c := &issues[k].Comments[j]; c.ID == id {
					c.Body = in.Body
					writeJSON(w, commentJSON(name, issues[k].Number, *c))
					return true
				}
			}
		}
		fail(w, http.StatusNotFound, "Not Found")
	case len(rest) == 1 && rest[0] == "pulls" && r.Method == http.MethodGet:
		head := r.URL.Query().Get("head")
		out := []any{}
		for _, pr := range s.pulls[name] {
			if (head == "" || head == p[1]+":"+pr.Head) && pr.State == "open" {
				out = append(out, s.pullJSON(name, pr))
			}
		}
		writeJSON(w, out)
	case len(rest) == 1 && rest[0] == "pulls" && r.Method == http.MethodPost:
		var in struct {
			Title, Body, Head, Base string
			Draft                   bool
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Head == "" || in.Base == "" {
			fail(w, http.StatusUnprocessableEntity, "Validation Failed")
			return true
		}
		for _, pr := range s.pulls[name] {
			if pr.Head == in.Head && pr.State == "open" {
				fail(w, http.StatusUnprocessableEntity, "A pull request already exists for "+p[1]+":"+in.Head+".")
				return true
			}
		}
		if s.pulls == nil {
			s.pulls = map[string][]Pull{}
		}
		pr := Pull{Number: 1000 + len(s.pulls[name]) + 1, Title: in.Title, Body: in.Body, Head: in.Head, Base: in.Base, State: "open", Draft: in.Draft}
		s.pulls[name] = append(s.pulls[name], pr)
		// A pull request is an issue too: its conversation is the
		// issue's comments.
		s.data.Repos[name] = append(s.data.Repos[name], Issue{Number: pr.Number, Title: pr.Title, Body: pr.Body, Author: s.login(), Created: time.Now().UTC(), PR: true})
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, s.pullJSON(name, pr))
	case len(rest) >= 2 && rest[0] == "pulls" && rest[1] != "" && s.pullRoute(w, r, name, rest):
	case len(rest) == 3 && rest[0] == "commits" && (rest[2] == "check-runs" || rest[2] == "status") && r.Method == http.MethodGet:
		s.commitChecks(w, name, rest[1], rest[2])
	case len(rest) == 2 && rest[0] == "pulls" && r.Method == http.MethodPatch:
		n, _ := strconv.Atoi(rest[1])
		var in struct{ Title, Body *string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		for k, pr := range s.pulls[name] {
			if pr.Number == n {
				if in.Title != nil {
					pr.Title = *in.Title
				}
				if in.Body != nil {
					pr.Body = *in.Body
				}
				s.pulls[name][k] = pr
				writeJSON(w, s.pullJSON(name, pr))
				return true
			}
		}
		fail(w, http.StatusNotFound, "Not Found")
	default:
		return false
	}
	return true
}

func (s *Server) login() string {
	if s.data.Login == "" {
		return "ralph-bot"
	}
	return s.data.Login
}

func (s *Server) defaultBranch() string {
	if s.data.DefaultBranch == "" {
		return "main"
	}
	return s.data.DefaultBranch
}

// addComment appends a comment with a fresh id; s.dmu is held.
func (s *Server) addComment(repo string, i int, author, body string) Comment {
	s.nextID++
	c := Comment{ID: 5000 + s.nextID, Author: author, Body: body, Created: time.Now().UTC()}
	s.data.Repos[repo][i].Comments = append(s.data.Repos[repo][i].Comments, c)
	return c
}

func commentJSON(repo string, n int, c Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author},
		"created_at": c.Created.UTC().Format(time.RFC3339), "updated_at": c.Created.UTC().Format(time.RFC3339),
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", repo, n, c.ID)}
}

func (s *Server) pullJSON(repo string, pr Pull) map[string]any {
	owner, _, _ := strings.Cut(repo, "/")
	head, base := s.sha(repo, pr.Head), s.sha(repo, pr.Base)
	m := map[string]any{"number": pr.Number, "node_id": nodeID(repo, pr.Number), "title": pr.Title, "body": pr.Body, "state": pr.State, "draft": pr.Draft,
		"merged":   pr.Merged,
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", repo, pr.Number),
		"head":     map[string]any{"ref": pr.Head, "label": owner + ":" + pr.Head, "sha": head},
		"base":     map[string]any{"ref": pr.Base, "sha": base}}
	// GitHub computes mergeability in the background: null until known.
	m["mergeable"] = nil
	if pr.State == "open" {
		if ok, known := s.mergeable(repo, pr.Base, pr.Head); known {
			m["mergeable"] = ok
		}
	}
	return m
}

// AddIssue files an issue (numbered after the repository's others when
// its Number is 0) and returns its number.
func (s *Server) AddIssue(repo string, is Issue) int {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if is.Number == 0 {
		for _, x := range s.data.Repos[repo] {
			if !x.PR || x.Number < 1000 { // the fake numbers pull requests from 1001
				is.Number = max(is.Number, x.Number)
			}
		}
		is.Number++
	}
	if is.Created.IsZero() {
		is.Created = time.Now().UTC()
	}
	s.data.Repos[repo] = append(s.data.Repos[repo], is)
	return is.Number
}

// AddComment comments on an issue as author and returns the comment's id.
func (s *Server) AddComment(repo string, number int, author, body string) int64 {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	i := slices.IndexFunc(s.data.Repos[repo], func(is Issue) bool { return is.Number == number })
	if i < 0 {
		return 0
	}
	return s.addComment(repo, i, author, body).ID
}

// Comments returns an issue's comments.
func (s *Server) Comments(repo string, number int) []Comment {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	for _, is := range s.data.Repos[repo] {
		if is.Number == number {
			return slices.Clone(is.Comments)
		}
	}
	return nil
}

// Pulls returns a repository's pull requests.
func (s *Server) Pulls(repo string) []Pull {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return slices.Clone(s.pulls[repo])
}

// Label adds label to an issue, as a person labelling it after its
// conversation began.
func (s *Server) Label(repo string, number int, label string) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	i := slices.IndexFunc(s.data.Repos[repo], func(is Issue) bool { return is.Number == number })
	if i >= 0 {
		s.data.Repos[repo][i].Labels = append(s.data.Repos[repo][i].Labels, label)
	}
}
