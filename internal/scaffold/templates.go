package scaffold

import (
	"bytes"
	"embed"
	"strings"
	"text/template"
)

//go:embed templates
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"join": strings.Join,
}).ParseFS(templateFS, "templates/*"))

func render(name string, data any) []byte {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		// The templates are compiled in and their tests render every one,
		// so a failure here is a programming error.
		panic("scaffold: render " + name + ": " + err.Error())
	}
	return b.Bytes()
}

// Prompt renders .ralph/PROMPT.md.
func Prompt(projectName string) []byte {
	return render("PROMPT.md", struct{ ProjectName string }{displayName(projectName)})
}

// AgentNotes renders .ralph/AGENT.md with the commands of the stacks; with
// none it asks for them.
func AgentNotes(projectName string, stacks []Stack) []byte {
	return render("AGENT.md.tmpl", struct {
		ProjectName string
		Stacks      []Stack
	}{displayName(projectName), stacks})
}

// Readme renders the README.md that setup writes into a new directory.
func Readme(projectName string) []byte {
	return render("README.md.tmpl", struct{ ProjectName string }{displayName(projectName)})
}

func displayName(name string) string {
	if strings.TrimSpace(name) == "" {
		return "This project"
	}
	return name
}

// PlaceholderTask starts a plan that nothing was imported into: the first
// iteration turns the specs into real tasks.
// PlaceholderTask is the template plan's one item, which asks for the real ones:
// a plan holding only it has no work yet.
const PlaceholderTask = "Study the project and .ralph/specs/, then replace this item with the real tasks, most important first"

type planSection struct {
	Title string
	Note  string
	Tasks []string // rendered lines: tasks, and "### group" headings
}

// FixPlan renders .ralph/fix_plan.md: the priority sections, Optional and
// Completed, with tasks placed by their priority (checked ones under
// Completed). With no tasks it holds one item asking for the real plan.
func FixPlan(projectName string, tasks []Task) []byte {
	if len(tasks) == 0 {
		tasks = []Task{{Text: PlaceholderTask, Priority: High}}
	}
	sections := []planSection{
		{Title: "High Priority"},
		{Title: "Medium Priority"},
		{Title: "Low Priority"},
		{Title: "Optional", Note: "Items here never block completion: ralph stops when everything above is checked."},
		{Title: "Completed"},
	}
	group := make([]string, len(sections)) // the last "###" written in each section
	for _, t := range tasks {
		i := int(t.Priority)
		if t.Done {
			i = int(Completed)
		}
		if t.Group != group[i] {
			if t.Group != "" {
				sections[i].Tasks = append(sections[i].Tasks, "", "### "+t.Group, "")
			}
			group[i] = t.Group
		}
		sections[i].Tasks = append(sections[i].Tasks, t.line())
	}
	for i := range sections {
		// A group heading opened the list with a blank line; the template
		// already writes one.
		if len(sections[i].Tasks) > 0 && sections[i].Tasks[0] == "" {
			sections[i].Tasks = sections[i].Tasks[1:]
		}
	}
	return render("fix_plan.md.tmpl", struct {
		ProjectName string
		Sections    []planSection
	}{strings.TrimSpace(projectName), sections})
}
