package servetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"ralph/internal/agent/fakeagent/script"
)

// Env is the environment of ralph processes under base (their HOME) with
// RALPH_HOME home: this process's with Vars.
func Env(base, home string) []string {
	return append(append(os.Environ(), "HOME="+base), Vars(home)...)
}

// Vars are what a test's ralph processes need in any environment: git
// with an identity and no system configuration, no pause between
// iterations, and RALPH_HOME home.
func Vars(home string) []string {
	return []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e",
		"RALPH_DELAY=0", "RALPH_FAILURE_BACKOFF=0", "RALPH_HOME=" + home}
}

// Repo makes dir a git repository of files (paths relative to it), all
// committed, and trusts its .ralphrc: the daemon, like `ralph run`, runs
// the agent command a .ralphrc names only once it is trusted.
func Repo(ralph string, env []string, dir string, files map[string]string) error {
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if _, err := run(dir, env, ralph, "trust", "-C", dir); err != nil {
		return err
	}
	return commitAll(dir, env, "init", "-q")
}

// commitAll runs git's init (with its arguments), then commits every file.
func commitAll(dir string, env []string, init ...string) error {
	for _, a := range [][]string{init, {"add", "-A"}, {"commit", "-qm", "init"}} {
		if _, err := Git(dir, env, a...); err != nil {
			return err
		}
	}
	return nil
}

// Remote makes work/remote.git, a bare repository whose main branch holds
// a README: the remote a request's work is cloned from and pushed to.
func Remote(work string, env []string) (string, error) {
	remote, seed := filepath.Join(work, "remote.git"), filepath.Join(work, "seed")
	if _, err := Git("", env, "init", "-q", "--bare", "-b", "main", remote); err != nil {
		return "", err
	}
	if err := os.MkdirAll(seed, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("# app\n"), 0o644); err != nil {
		return "", err
	}
	if err := commitAll(seed, env, "init", "-q", "-b", "main"); err != nil {
		return "", err
	}
	_, err := Git(seed, env, "push", "-q", remote, "main")
	return remote, err
}

// Git runs git in dir ("" for the current directory) with exactly env.
func Git(dir string, env []string, args ...string) (string, error) {
	return run(dir, env, "git", args...)
}

// AgentRepo makes base/src-NAME a Repo whose agent is the fake at fake
// playing s, written to base/agent-NAME.json, with more files if given.
// It returns the repository and the script's path (script.ArgvLog of it
// lists the agent's calls).
func AgentRepo(ralph, fake string, env []string, base, name string, s script.Script, more map[string]string) (dir, scriptPath string, err error) {
	dir = filepath.Join(base, "src-"+name)
	scriptPath = filepath.Join(base, "agent-"+name+".json")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", "", err
	}
	if err := s.Write(scriptPath); err != nil {
		return "", "", err
	}
	files := map[string]string{
		".ralphrc":  fmt.Sprintf("CLAUDE_CODE_CMD=\"env %s=%s %s\"\nMAX_CALLS_PER_HOUR=10000\n", script.EnvScript, scriptPath, fake),
		"README.md": "# " + name + "\n",
	}
	for f, content := range more {
		files[f] = content
	}
	return dir, scriptPath, Repo(ralph, env, dir, files)
}

// run runs a command in dir with exactly env; its error holds the output.
func run(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out), nil
}
