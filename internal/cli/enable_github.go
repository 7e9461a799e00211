package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"ralph/internal/github"
	"ralph/internal/importer"
	"ralph/internal/scaffold"
)

// githubTasks is `ralph enable --from-github-label`: open issues with a
// label become the plan's tasks, in priority order.
type githubTasks struct {
	dir, repo, label, api string
	limit                 int
}

func (g githubTasks) Describe() string {
	return fmt.Sprintf("GitHub issues labelled %s", g.label)
}

func (g githubTasks) Tasks(ctx context.Context) ([]scaffold.Task, error) {
	repo, err := github.DefaultRepo(ctx, g.dir)
	if g.repo != "" {
		r, perr := github.ParseRepo(g.repo)
		if perr != nil {
			return nil, &scaffold.Error{Kind: scaffold.KindBadInput, Msg: "--github-repo: " + perr.Error()}
		}
		r.Host, err = repo.Host, nil
		repo = r
	}
	if err != nil {
		return nil, &scaffold.Error{Kind: scaffold.KindBadInput, Msg: "no GitHub repository: " + err.Error() + " (use --github-repo owner/name)"}
	}
	base := g.api
	if base == "" {
		base = os.Getenv("GITHUB_API_URL")
	}
	if base == "" {
		base = github.APIBase(repo.Host)
	}
	host := repo.Host
	if u, err := url.Parse(base); err == nil && u.Host != "" && u.Host != "api.github.com" {
		host = u.Host
	}
	token, _ := github.TokenSource{Getenv: os.Getenv}.Token(ctx, host)
	c, err := github.New(github.Options{BaseURL: base, Token: token})
	if err != nil {
		return nil, err
	}
	issues, err := c.ListIssues(ctx, repo, github.Filter{Labels: []string{g.label}, State: "open", Limit: g.limit})
	if err != nil {
		return nil, err
	}
	if len(issues) == 0 {
		return nil, nil
	}
	ordered, _, err := importer.Select(issues, importer.SelectPriority, nil)
	if err != nil {
		return nil, err
	}
	var tasks []scaffold.Task
	for _, c := range ordered {
		tasks = append(tasks, scaffold.Task{Text: fmt.Sprintf("%s (#%d)", c.Issue.Title, c.Issue.Number), Priority: planPriority(c.Priority)})
	}
	return tasks, nil
}

func planPriority(p importer.Priority) scaffold.Priority {
	switch p {
	case importer.Critical, importer.High:
		return scaffold.High
	case importer.Low:
		return scaffold.Low
	}
	return scaffold.Medium
}
