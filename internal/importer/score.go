package importer

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultThreshold is the completeness score below which the agent is told
// to write an implementation plan before the three files.
const DefaultThreshold = 60

// Score is how complete a PRD looks, 0–100, as the sum of six parts:
//
//	part                 max  points
//	acceptance criteria   25  an "Acceptance criteria" / "Definition of done" /
//	                          "Success criteria" / "Done when" / "Exit criteria"
//	                          heading with list items under it 25, the heading
//	                          alone 15; otherwise Given/When/Then lines 20
//	checklists            15  3+ checkboxes 15, 1–2 checkboxes 10; otherwise
//	                          5+ list items 8, 2–4 list items 4
//	sections              20  5 for each kind of heading present: requirements
//	                          (requirements, features, user stories, use cases),
//	                          scope (scope, overview, background, context,
//	                          problem, goals), out of scope (out of scope,
//	                          non-goals), technical (design, architecture,
//	                          implementation, API, data model, constraints,
//	                          testing)
//	length                20  one point per 30 words, at most 20 (600 words)
//	code                  10  a fenced code block 10; otherwise 2+ inline code
//	                          spans 5
//	concrete nouns        10  2 per distinct concrete reference (file path or
//	                          file name, endpoint, --flag, CamelCase or
//	                          snake_case identifier, number with a unit), at
//	                          most 10
//
// Headings are Markdown headings, lines that are only **bold**, and short
// lines ending in a colon ("Requirements:"), outside code blocks. A JSON PRD
// is scored on an outline of it in which keys are headings.
type Score struct {
	Total int
	Parts []Part
}

// Part is one line of the score.
type Part struct {
	Name   string
	Points int
	Max    int
	// Note says what was found, or what is missing when Points < Max.
	Note string
}

// Gaps are the parts that did not earn half their points, as notes for the
// agent ("no acceptance criteria").
func (s Score) Gaps() []string {
	var out []string
	for _, p := range s.Parts {
		if p.Points*2 < p.Max {
			out = append(out, p.Note)
		}
	}
	return out
}

// String is "42/100 (acceptance criteria 0/25, …)".
func (s Score) String() string {
	parts := make([]string, len(s.Parts))
	for i, p := range s.Parts {
		parts[i] = fmt.Sprintf("%s %d/%d", p.Name, p.Points, p.Max)
	}
	return fmt.Sprintf("%d/100 (%s)", s.Total, strings.Join(parts, ", "))
}

var (
	acceptanceRE = regexp.MustCompile(`(?i)\b(acceptance (criteria|tests?)|definition of done|success criteria|done when|exit criteria)\b`)
	gherkinRE    = regexp.MustCompile(`(?im)^\s*[-*]?\s*(\*\*)?(given|when|then)\b`)
	checkboxRE   = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+\[[ xX]\]\s+\S`)
	listItemRE   = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+\S`)
	mdHeadingRE  = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$`)
	boldLineRE   = regexp.MustCompile(`^\s*\*\*([^*]+)\*\*:?\s*$`)
	colonLineRE  = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z /&-]{1,40}):\s*$`)
	inlineCodeRE = regexp.MustCompile("`[^`\n]+`")
	wordRE       = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'_-]*`)

	// Concrete references: paths and file names, endpoints, flags,
	// identifiers, quantities.
	concreteREs = []*regexp.Regexp{
		regexp.MustCompile(`\b[\w.-]+/[\w./-]*[\w-]\b`),                                                                     // internal/x/y.go, api/v1
		regexp.MustCompile(`\b[\w-]+\.(go|ts|tsx|js|py|rs|java|md|json|ya?ml|toml|sql|sh|css|html)\b`),                      // main.go
		regexp.MustCompile(`(?:^|\s)--[a-z][\w-]+`),                                                                         // --dry-run
		regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE)\s+/\S*`),                                                          // GET /users
		regexp.MustCompile(`\b[a-z]+(?:[A-Z][a-z0-9]+){1,}\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b`),                        // parseConfig, UserStore
		regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`),                                                             // user_id
		regexp.MustCompile(`\b\d+(?:\.\d+)?\s?(?:(?:ms|s|sec|seconds?|minutes?|hours?|h|KB|MB|GB|KiB|MiB|GiB|px|rps)\b|%)`), // 200ms, 99.9%
	}

	sectionKinds = []struct {
		name string
		re   *regexp.Regexp
	}{
		{"requirements", regexp.MustCompile(`(?i)\b(requirements?|features?|user stor(y|ies)|use cases?|functional)\b`)},
		{"scope", regexp.MustCompile(`(?i)\b(scope|overview|background|context|problem|goals?|objectives?|motivation)\b`)},
		{"out of scope", regexp.MustCompile(`(?i)\b(out of scope|not in scope|non[- ]goals?|exclusions?)\b`)},
		{"technical", regexp.MustCompile(`(?i)\b(technical|design|architecture|implementation|api|data model|constraints?|testing|test plan|tech stack)\b`)},
	}
)

// ScoreDocument scores a document; see Score for the formula.
func ScoreDocument(d Document) Score {
	return ScoreText(d.scoringText())
}

// ScoreText scores Markdown or plain text.
func ScoreText(text string) Score {
	lines, fenced := splitOutsideCode(text)
	var headings []string
	checkboxes, items := 0, 0
	// Acceptance criteria: a heading, and list items under it before the
	// next heading.
	inAcceptance, acceptanceHeading, acceptanceItems := false, false, 0
	for _, l := range lines {
		if h, ok := heading(l); ok {
			headings = append(headings, h)
			inAcceptance = acceptanceRE.MatchString(h)
			acceptanceHeading = acceptanceHeading || inAcceptance
			continue
		}
		switch {
		case checkboxRE.MatchString(l):
			checkboxes++
		case listItemRE.MatchString(l):
			items++
		default:
			continue
		}
		if inAcceptance {
			acceptanceItems++
		}
	}
	prose := strings.Join(lines, "\n")

	var s Score
	add := func(name string, points, maxPoints int, note string) {
		s.Parts = append(s.Parts, Part{Name: name, Points: points, Max: maxPoints, Note: note})
		s.Total += points
	}

	switch {
	case acceptanceHeading && acceptanceItems > 0:
		add("acceptance criteria", 25, 25, fmt.Sprintf("acceptance criteria with %d item(s)", acceptanceItems))
	case acceptanceHeading:
		add("acceptance criteria", 15, 25, "an acceptance criteria heading without list items under it")
	case len(gherkinRE.FindAllString(prose, -1)) >= 2:
		add("acceptance criteria", 20, 25, "Given/When/Then scenarios, no acceptance criteria section")
	default:
		add("acceptance criteria", 0, 25, "no acceptance criteria")
	}

	switch {
	case checkboxes >= 3:
		add("checklists", 15, 15, fmt.Sprintf("%d checkbox items", checkboxes))
	case checkboxes > 0:
		add("checklists", 10, 15, fmt.Sprintf("only %d checkbox item(s)", checkboxes))
	case items >= 5:
		add("checklists", 8, 15, fmt.Sprintf("%d list items but no checkboxes", items))
	case items >= 2:
		add("checklists", 4, 15, fmt.Sprintf("only %d list items, no checkboxes", items))
	default:
		add("checklists", 0, 15, "no checklist or list of tasks")
	}

	var found, missing []string
	for _, k := range sectionKinds {
		if hasSection(headings, k.name, k.re) {
			found = append(found, k.name)
		} else {
			missing = append(missing, k.name)
		}
	}
	note := "sections: " + strings.Join(found, ", ")
	if len(missing) > 0 {
		note = "no " + strings.Join(missing, ", ") + " section"
	}
	add("sections", 5*len(found), 20, note)

	words := len(wordRE.FindAllString(prose, -1))
	add("length", min(20, words/30), 20, fmt.Sprintf("%d words", words))

	inline := len(inlineCodeRE.FindAllString(prose, -1))
	switch {
	case fenced > 0:
		add("code", 10, 10, fmt.Sprintf("%d code block(s)", fenced))
	case inline >= 2:
		add("code", 5, 10, "inline code only, no code block")
	default:
		add("code", 0, 10, "no code, commands or examples")
	}

	concrete := concreteNouns(prose + "\n" + strings.Join(inlineCodeRE.FindAllString(prose, -1), " "))
	add("concrete nouns", min(10, 2*concrete), 10, fmt.Sprintf("%d concrete reference(s) (paths, endpoints, flags, identifiers, quantities)", concrete))
	return s
}

// splitOutsideCode returns the lines outside fenced code blocks and how
// many blocks there were. An unclosed fence runs to the end, as Markdown
// renders it.
func splitOutsideCode(text string) ([]string, int) {
	var out []string
	fence, blocks := "", 0
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
			blocks++
		case fence != "" && strings.HasPrefix(t, fence):
			fence = ""
		case fence == "":
			out = append(out, l)
		}
	}
	return out, blocks
}

func heading(l string) (string, bool) {
	for _, re := range []*regexp.Regexp{mdHeadingRE, boldLineRE, colonLineRE} {
		if m := re.FindStringSubmatch(l); m != nil {
			return strings.TrimSpace(m[1]), true
		}
	}
	return "", false
}

// hasSection looks for a heading of one kind; "Out of scope" is not a scope
// section.
func hasSection(headings []string, kind string, re *regexp.Regexp) bool {
	for _, h := range headings {
		if kind == "scope" && sectionKinds[2].re.MatchString(h) {
			continue
		}
		if re.MatchString(h) {
			return true
		}
	}
	return false
}

func concreteNouns(text string) int {
	seen := map[string]bool{}
	for _, re := range concreteREs {
		for _, m := range re.FindAllString(text, -1) {
			seen[strings.ToLower(strings.TrimSpace(m))] = true
		}
	}
	return len(seen)
}
