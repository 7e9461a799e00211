package importer

import (
	"fmt"
	"regexp"
	"strings"

	"ralph/internal/github"
)

// htmlComment matches the <!-- guidance --> issue templates leave in bodies:
// it is advice to the reporter, not requirements.
var htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)

// IssueDocument renders an issue and its comments as a Markdown PRD: the
// title as the heading, where it came from (link, state, labels, milestone,
// assignees), the body, and the comments in order, since decisions often
// live there.
func IssueDocument(is github.Issue, comments []github.Comment) Document {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", oneLine(is.Title))
	meta := []string{"Imported from GitHub issue " + is.Ref()}
	if is.URL != "" {
		meta[0] = fmt.Sprintf("Imported from GitHub issue [%s](%s)", is.Ref(), is.URL)
	}
	add := func(k, v string) {
		if v != "" {
			meta = append(meta, k+": "+v)
		}
	}
	add("State", is.State)
	add("Labels", strings.Join(is.Labels, ", "))
	add("Milestone", is.Milestone)
	add("Assignees", strings.Join(is.Assignees, ", "))
	if !is.CreatedAt.IsZero() {
		opened := is.CreatedAt.UTC().Format("2006-01-02")
		if is.Author != "" {
			opened += " by " + is.Author
		}
		add("Opened", opened)
	}
	for _, m := range meta {
		fmt.Fprintf(&b, "> %s  \n", m)
	}
	b.WriteString("\n## Description\n\n")
	body := cleanBody(is.Body)
	if body == "" {
		body = "_The issue has no description; the title is all there is._"
	}
	b.WriteString(body + "\n")
	scored := []string{oneLine(is.Title), cleanBody(is.Body)}
	var kept int
	for _, c := range comments {
		text := cleanBody(c.Body)
		if text == "" {
			continue
		}
		if kept == 0 {
			b.WriteString("\n## Comments\n")
		}
		kept++
		who := c.Author
		if who == "" {
			who = "someone"
		}
		when := ""
		if !c.CreatedAt.IsZero() {
			when = " on " + c.CreatedAt.UTC().Format("2006-01-02")
		}
		fmt.Fprintf(&b, "\n### Comment by %s%s\n\n%s\n", who, when, text)
		scored = append(scored, text)
	}
	return Document{Source: "GitHub issue " + is.Ref(), Format: FormatMarkdown, Text: b.String(), scored: strings.Join(scored, "\n\n")}
}

func cleanBody(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(htmlComment.ReplaceAllString(s, ""))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
