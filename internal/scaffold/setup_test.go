package scaffold

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSetupNewProject(t *testing.T) {
	needGit(t)
	dir := filepath.Join(t.TempDir(), "my-app")
	res, err := Setup(context.Background(), SetupOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || !res.GitInitialized || !res.Committed || res.Commit == "" || res.ProjectName != "my-app" {
		t.Fatalf("%+v", res)
	}
	want := []string{".gitignore", ".ralph/AGENT.md", ".ralph/PROMPT.md", ".ralph/fix_plan.md", ".ralph/specs/.gitkeep", ".ralphrc", "README.md"}
	committed := strings.Fields(gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD"))
	if !slices.Equal(committed, want) {
		t.Errorf("committed %v, want %v", committed, want)
	}
	if status := gitOut(t, dir, "status", "--porcelain"); status != "" {
		t.Errorf("left uncommitted:\n%s", status)
	}
	if log := gitOut(t, dir, "log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Errorf("log:\n%s", log)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "README.md")), "# my-app") {
		t.Error("README")
	}
}

func TestSetupRefusesNonEmptyDirectory(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"README.md": "mine\n", "main.py": "print(1)\n", "requirements.txt": "requests\n"})
	before := snapshot(t, dir)
	_, err := Setup(context.Background(), SetupOptions{Dir: dir})
	if KindOf(err) != KindRefused {
		t.Fatalf("err %v", err)
	}
	sameTree(t, before, snapshot(t, dir))

	// --force adds ralph's files and commits only those; the README and the
	// user's code stay as they were, uncommitted.
	res, err := Setup(context.Background(), SetupOptions{Dir: dir, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if readFile(t, filepath.Join(dir, "README.md")) != "mine\n" || !slices.Contains(res.FilesSkipped, "README.md") {
		t.Fatalf("README replaced: %+v", res)
	}
	committed := gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD")
	if strings.Contains(committed, "README.md") || strings.Contains(committed, "main.py") || !strings.Contains(committed, ".ralph/PROMPT.md") {
		t.Errorf("committed:\n%s", committed)
	}
	if len(res.Stack) != 1 || res.Stack[0].ID != "python" {
		t.Errorf("stack %+v", res.Stack)
	}
}

func TestSetupInExistingRepositoryCommitsNothing(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	gitOut(t, dir, "init", "-q")
	writeFiles(t, dir, map[string]string{"x.txt": "x"})
	res, err := Setup(context.Background(), SetupOptions{Dir: dir, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.GitInitialized || res.Committed || len(res.Warnings) == 0 {
		t.Fatalf("%+v", res)
	}
	if out := gitOut(t, dir, "rev-list", "--all"); out != "" {
		t.Errorf("commits made: %s", out)
	}
}

func TestSetupFailures(t *testing.T) {
	needGit(t)
	dir := filepath.Join(t.TempDir(), "p")
	if _, err := Setup(context.Background(), SetupOptions{Dir: dir, Env: noGit}); KindOf(err) != KindMissingDependency {
		t.Fatalf("no git: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("the directory was created without git")
	}
	if _, err := Setup(context.Background(), SetupOptions{Dir: " "}); KindOf(err) != KindBadInput {
		t.Fatalf("no name: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	writeFiles(t, filepath.Dir(file), map[string]string{"f": "x"})
	if _, err := Setup(context.Background(), SetupOptions{Dir: file}); KindOf(err) != KindBadInput {
		t.Fatalf("a file: %v", err)
	}
}

// When the commit fails (typically: no git identity configured) the files
// are still there and staged; the missing commit is a warning, not a failure.
// No git identity: the files are created and staged, and setup fails with
// what to do — it used to say it initialised the repository and exit 0.
func TestSetupWithoutGitIdentityFails(t *testing.T) {
	needGit(t)
	for name, runner := range map[string]GitRunner{"no identity": noIdentity, "commit fails": failingCommit} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			res, err := Setup(context.Background(), SetupOptions{Dir: dir, Env: Env{Git: runner}})
			if err == nil || KindOf(err) != KindGeneral || !res.Created || res.Committed || !res.GitInitialized {
				t.Fatalf("%+v, %v", res, err)
			}
			if name == "no identity" && !strings.Contains(err.Error(), "git config --global user.email") {
				t.Errorf("the error does not say what to do: %v", err)
			}
			if _, serr := os.Stat(filepath.Join(dir, ".ralph", "PROMPT.md")); serr != nil {
				t.Errorf("files not kept: %v", serr)
			}
		})
	}
}

// noIdentity is real git on a machine where nobody set user.name and
// user.email and git will not guess.
func noIdentity(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if args[0] == "var" || args[0] == "commit" {
		return nil, &Error{Msg: "git " + args[0] + ": Author identity unknown"}
	}
	return runGit(ctx, dir, args...)
}

// failingCommit is real git except that commit fails as it does without
// user.name and user.email.
func failingCommit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if args[0] == "commit" {
		return nil, &Error{Msg: "git commit: Please tell me who you are."}
	}
	return runGit(ctx, dir, args...)
}
