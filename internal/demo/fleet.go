package demo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"ralph/internal/fakeapi"
)

// The fleet demo (`ralph demo --serve`): a daemon with two sessions, a
// task on each. The shop's agent asks a question and, answered, finishes;
// the docs' agent finishes at once. With one loop at a time the calls come
// in this order: the shop's first, the docs', the shop's second (after the
// answer), which is the order of FleetScript's iterations.
const (
	FleetShop = "shop"
	FleetDocs = "docs"

	ShopTask = "Greet people by name"
	DocsTask = "Write a contributing guide"
	// ShopQuestion is what the shop's agent asks; ShopAnswer what the demo
	// answers for the person watching.
	ShopQuestion = "Should an empty name greet the world, or print the usage?"
	ShopAnswer   = "Greet the world."
)

const docsReadme = "# docs\n\nThe team's handbook.\n"

const contributing = "# Contributing\n\n1. Open an issue that says what you want to change.\n" +
	"2. Work on a branch; keep each commit small.\n3. Run the tests before you push: `go test ./...`.\n" +
	"4. Open a pull request that closes the issue.\n"

// NewFleet makes the demo's two session directories under dir, each a git
// repository with a first commit, and returns them by session name.
func NewFleet(dir string) (map[string]string, error) {
	shop, docs := filepath.Join(dir, FleetShop), filepath.Join(dir, FleetDocs)
	if err := NewProject(shop); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(docs, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(filepath.Join(docs, "README.md"), []byte(docsReadme), 0o644); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("demo: the fleet demo needs git: ralph serve's sessions are git repositories")
	}
	if err := commit(docs, "docs: the team's handbook"); err != nil {
		return nil, err
	}
	return map[string]string{FleetShop: shop, FleetDocs: docs}, nil
}

// FleetScript is what the fake model answers in the fleet demo.
func FleetScript() fakeapi.Script {
	return fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{ // the shop, first call
			think(read("Let me see how main.go greets today.", "main.go")),
			step(fakeapi.ToolTurn("I'll move the greeting into greet(name) and read the name from the command line.", "Edit",
				editInput("main.go", mainGo, greetedMain))),
			step(fakeapi.TextTurn("main.go greets by name through greet(name). Before the last step I need a decision." +
				"\n\n---CLARITY_STATUS---\nSTATUS: NEEDS_CLARIFICATION\nCLARIFICATION_NEEDED: true\nCLARIFICATION_QUESTIONS: " +
				ShopQuestion + "\n---END_CLARITY_STATUS---")),
		}},
		{Turns: []fakeapi.Turn{ // the docs, its only call
			think(read("Let me read the handbook first.", "README.md")),
			step(fakeapi.ToolTurn("Writing the contributing guide.", "Write",
				map[string]string{"file_path": "CONTRIBUTING.md", "content": contributing})),
			step(fakeapi.TextTurn("CONTRIBUTING.md says how to propose, make and send a change. The task is done." +
				statusBlock("COMPLETE", 1, 1, "DOCUMENTATION", 0, true, "Nothing left"))),
		}},
		{Turns: []fakeapi.Turn{ // the shop, answered
			think(fakeapi.ToolTurn("The answer: greet the world. Adding the test that holds it.", "Write",
				map[string]string{"file_path": "main_test.go", "content": greetTest})),
			step(fakeapi.TextTurn("An empty name greets the world, as answered; main_test.go holds it. The task is done." +
				statusBlock("COMPLETE", 1, 1, "TESTING", 0, true, "Run go test ./..."))),
		}},
	}}
}
