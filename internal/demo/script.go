package demo

import (
	"fmt"
	"strings"
	"time"

	"ralph/internal/fakeapi"
	"ralph/internal/scaffold"
)

// Pauses before each scripted reply, so that a person watching sees the
// agent work step by step; a real model takes seconds per reply. About
// ten seconds in all.
const (
	thinkDelay = 1200 * time.Millisecond // before the first reply of an iteration
	stepDelay  = 600 * time.Millisecond
)

const greetedMain = `package main

import (
	"fmt"
	"os"
)

// greet returns the greeting for name; an empty name greets the world.
func greet(name string) string {
	if name == "" {
		name = "world"
	}
	return "Hello, " + name + "!"
}

func main() {
	name := ""
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	fmt.Println(greet(name))
}
`

const greetTest = `package main

import "testing"

func TestGreet(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"", "Hello, world!"},
		{"gopher", "Hello, gopher!"},
	} {
		if got := greet(c.name); got != c.want {
			t.Errorf("greet(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
`

const readme = "# greet\n\nA tiny command-line program that says hello.\n\n" +
	"```sh\ngo run .          # Hello, world!\ngo run . gopher   # Hello, gopher!\ngo test ./...     # the table test of greet()\n```\n\n" +
	"Written by an agent in three iterations of `ralph demo`; the plan it worked\nthrough is `.ralph/fix_plan.md`.\n"

// Script is what the fake model answers, one iteration per task: read the
// plan, do the task with the file tools, check it off, and end with the
// status block that PROMPT.md asks for. The last iteration claims
// completion, so the loop stops with project_complete. Paths are relative to
// the project: both Claude Code and the built-in agent resolve them against
// their working directory, which keeps the script independent of where the
// project lives.
func Script() fakeapi.Script {
	return fakeapi.Script{Iterations: []fakeapi.Iteration{
		{Turns: []fakeapi.Turn{
			think(read("I'll start with the plan, as PROMPT.md says.", scaffold.PlanPath)),
			step(read("The first open task is greeting by name. Let me look at main.go.", "main.go")),
			step(fakeapi.ToolTurn("I'll move the greeting into greet(name) and read the name from the command line.", "Edit",
				editInput("main.go", mainGo, greetedMain))),
			step(checkOff(TaskGreetByName)),
			step(fakeapi.TextTurn("main.go now greets by name through greet(name); task 1 is checked off." +
				statusBlock("IN_PROGRESS", 1, 2, "IMPLEMENTATION", 2, false, "Next: a table test for greet()"))),
		}},
		{Turns: []fakeapi.Turn{
			think(read("Back to the plan for the next task.", scaffold.PlanPath)),
			step(fakeapi.ToolTurn("Next is a table test for greet().", "Write",
				map[string]string{"file_path": "main_test.go", "content": greetTest})),
			step(checkOff(TaskTest)),
			step(fakeapi.TextTurn("Added main_test.go with a table test of greet(). The demo agent may only read and " +
				"write files, so the tests were not run here: `go test ./...` runs them." +
				statusBlock("IN_PROGRESS", 1, 2, "TESTING", 1, false, "Next: the README"))),
		}},
		{Turns: []fakeapi.Turn{
			think(read("One task left, if the plan agrees.", scaffold.PlanPath)),
			step(fakeapi.ToolTurn("Writing the README.", "Write",
				map[string]string{"file_path": "README.md", "content": readme})),
			step(checkOff(TaskReadme)),
			step(fakeapi.TextTurn("README.md explains what greet does and how to run it. Every task in the plan is " +
				"checked off, so the project is complete." +
				statusBlock("COMPLETE", 1, 2, "DOCUMENTATION", 0, true, "All tasks are done; run go test ./... to see the test pass"))),
		}},
	}}
}

func read(text, path string) fakeapi.Turn {
	return fakeapi.ToolTurn(text, "Read", map[string]string{"file_path": path})
}

func checkOff(task string) fakeapi.Turn {
	return fakeapi.ToolTurn("Checking the task off in the plan.", "Edit",
		editInput(scaffold.PlanPath, "- [ ] "+task, "- [x] "+task))
}

func editInput(path, old, new string) map[string]string {
	return map[string]string{"file_path": path, "old_string": old, "new_string": new}
}

func think(t fakeapi.Turn) fakeapi.Turn {
	t.Delay = fakeapi.Duration(thinkDelay)
	return t
}

func step(t fakeapi.Turn) fakeapi.Turn {
	t.Delay = fakeapi.Duration(stepDelay)
	return t
}

// statusBlock is the RALPH_STATUS block of PROMPT.md, every field present.
// Tests are never reported as run: the demo's tools cannot run them.
func statusBlock(status string, done, files int, work string, remaining int, exit bool, next string) string {
	var b strings.Builder
	b.WriteString("\n\n---RALPH_STATUS---\n")
	fmt.Fprintf(&b, "STATUS: %s\nTASKS_COMPLETED_THIS_LOOP: %d\nFILES_MODIFIED: %d\n", status, done, files)
	fmt.Fprintf(&b, "TESTS_STATUS: NOT_RUN\nWORK_TYPE: %s\nTASKS_REMAINING: %d\n", work, remaining)
	fmt.Fprintf(&b, "EXIT_SIGNAL: %v\nRECOMMENDATION: %s\n---END_RALPH_STATUS---", exit, next)
	return b.String()
}
