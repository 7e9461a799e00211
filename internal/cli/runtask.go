package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ralph/internal/plan"
	"ralph/internal/scaffold"
	"ralph/internal/store"
)

// seedTask makes task the first open item of the project's plan, as peers'
// `-p "…"` starts work in one step. A plan with no work yet (empty, all
// checked, or only the template's placeholder) takes it at once; open
// tasks are replaced only when the person confirms it on a terminal, and
// the old plan is kept beside it.
func seedTask(ios IO, st *store.Store, task string) error {
	if plan.OneLine(task) == "" {
		return usageError{errors.New("--task is empty: give the task's text, e.g. --task \"Add a health endpoint\"")}
	}
	path := st.FixPlanFile()
	// The plan a repository supplies is read as every read of it is:
	// confined to the project, never through a link, capped.
	src, err := store.ReadIn(st.ProjectDir(), path, store.MaxPlanSize)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	placeholder := func(text string) bool { return text == scaffold.PlaceholderTask }
	var open []string
	for _, t := range plan.Parse(src).Tasks {
		if !t.Done && !placeholder(t.Text) {
			open = append(open, t.Text)
		}
	}
	name := filepath.Base(path)
	if len(open) > 0 {
		old := path + ".old"
		if !stdinIsTerminal(ios.In) {
			return usageError{fmt.Errorf("%s has %s (the first: %q); --task replaces them only when you confirm it on a terminal: "+
				"finish or remove them, or run without --task", name, plural(len(open), "open task"), open[0])}
		}
		fmt.Fprintf(ios.Err, "%s has %s (the first: %q).\nReplace them with %q? The old plan is kept as %s. [y/N] ",
			name, plural(len(open), "open task"), open[0], plan.OneLine(task), filepath.Base(old))
		answer, _ := bufio.NewReader(ios.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return usageError{fmt.Errorf("kept %s as it is; nothing was run", name)}
		}
		if err := store.WriteFileAtomic(old, src, 0o644); err != nil {
			return err
		}
		placeholder = func(string) bool { return true } // every open item goes
	}
	if err := store.WriteFileAtomic(path, plan.Seed(src, task, placeholder), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(ios.Err, "ralph: %s starts with: %s\n", name, plan.OneLine(task))
	return nil
}

// promptFileError explains `-p TEXT`: other tools' -p is the prompt itself,
// ralph's (the bash tool's) is the prompt's file.
func promptFileError(dir string, given string) error {
	p := given
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return usageError{fmt.Errorf("-p/--prompt names the prompt FILE (as in the bash tool), and there is no file %q; "+
		"to give ralph a task, use --task %q", given, plan.OneLine(given))}
}
