package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// daemonSecrets are what a daemon's environment holds; none may reach a
// program git runs.
var daemonSecrets = map[string]string{
	"GITHUB_TOKEN": "ghp_secret1", "SLACK_BOT_TOKEN": "xoxb-secret2", "SLACK_SIGNING_SECRET": "secret3",
	"TELEGRAM_BOT_TOKEN": "secret4", "RALPH_API_TOKEN": "secret5", "GITHUB_WEBHOOK_SECRET": "secret6",
	"RALPH_TEMPORAL_API_KEY": "secret7", "OPENAI_API_KEY": "secret8", "SOME_SERVICE_TOKEN": "secret9",
}

func TestGitEnvironmentHoldsNoSecret(t *testing.T) {
	for k, v := range daemonSecrets {
		t.Setenv(k, v)
	}
	r := newRepoWithFiles(t, map[string]string{"a": "1"})
	t.Setenv("GIT_DIR", "/elsewhere") // the user's GIT_* must not move ralph's git either
	// A shell alias is a program git runs: it prints what it was given.
	out, err := gitCmd{dir: r.dir, args: []string{"-c", "alias.e=!env", "e"}}.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range daemonSecrets {
		if strings.Contains(string(out), v) || strings.Contains(string(out), k+"=") {
			t.Errorf("%s reached a program git ran", k)
		}
	}
	for _, want := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH="} {
		if !strings.Contains(string(out), want) {
			t.Errorf("git's environment lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "/elsewhere") {
		t.Errorf("the user's GIT_DIR reached ralph's git")
	}
}

// evil writes a program that leaves a marker when run, and returns both.
func evil(t *testing.T) (prog, marker string) {
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	prog = filepath.Join(dir, "evil.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\ntouch "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, marker
}

// Without a guard, the settings ralph passes keep the repository's own
// programs from running on the paths its commands take.
func TestHardeningRunsNoRepositoryProgram(t *testing.T) {
	prog, marker := evil(t)
	r := newRepoWithFiles(t, map[string]string{"a": "1", ".gitattributes": "* filter=x diff=x\n"})
	r.git("config", "core.fsmonitor", prog)
	r.git("config", "core.hooksPath", filepath.Dir(prog))
	for _, h := range []string{"reference-transaction", "post-commit", "post-checkout", "post-index-change"} {
		os.Symlink(prog, filepath.Join(filepath.Dir(prog), h))
	}
	r.git("config", "core.pager", prog)
	r.git("config", "diff.x.textconv", prog)
	r.git("config", "commit.gpgSign", "true")
	r.git("config", "gpg.program", prog)
	r.write("a", "2")
	before := r.snapshot()
	if _, err := Backup(context.Background(), r.dir, "t"); err != nil {
		t.Fatal(err)
	}
	r.snapshotAfter(before)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program the repository named ran")
	}
}

func TestGuardRefusesAChangedControlFile(t *testing.T) {
	ctx := context.Background()
	type setup struct {
		r      *repo
		prog   string
		linked string // the linked worktree's dir, when the case uses one
	}
	cases := []struct {
		name   string
		linked bool
		before func(s setup) // the user's own setup, before the guard
		agent  func(s setup) // what the sandboxed agent does
		file   string        // the file the error names, relative to the repository
	}{
		{name: "fsmonitor", agent: func(s setup) { s.r.git("config", "core.fsmonitor", s.prog) }, file: ".git/config"},
		{name: "hooksPath", agent: func(s setup) { s.r.git("config", "core.hooksPath", filepath.Dir(s.prog)) }, file: ".git/config"},
		{name: "filter", agent: func(s setup) {
			s.r.write(".gitattributes", "* filter=x\n")
			s.r.git("config", "filter.x.clean", s.prog)
		}, file: ".git/config"},
		{name: "sshCommand", agent: func(s setup) { s.r.git("config", "core.sshCommand", s.prog) }, file: ".git/config"},
		{name: "pager", agent: func(s setup) { s.r.git("config", "core.pager", s.prog) }, file: ".git/config"},
		{name: "include.path",
			before: func(s setup) { s.r.write("inc.cfg", "[core]\n"); s.r.git("config", "include.path", "../inc.cfg") },
			agent:  func(s setup) { s.r.write("inc.cfg", "[core]\n\tfsmonitor = "+s.prog+"\n") }, file: "inc.cfg"},
		{name: "hook", agent: func(s setup) { s.r.write(".git/hooks/reference-transaction", "#!/bin/sh\n") },
			file: ".git/hooks/reference-transaction"},
		{name: "info", agent: func(s setup) { s.r.write(".git/info/attributes", "* filter=x\n") }, file: ".git/info/attributes"},
		{name: "commondir", agent: func(s setup) { s.r.write(".git/commondir", "/elsewhere\n") }, file: ".git/commondir"},
		{name: "replaced .git", agent: func(s setup) {
			os.Rename(s.r.path(".git"), s.r.path("old.git"))
			s.r.git("init", "-q")
			s.r.git("config", "core.fsmonitor", s.prog)
		}, file: ".git/config"},
		{name: "gitfile", linked: true, agent: func(s setup) {
			other := newRepoWithFiles(s.r.tb, map[string]string{"b": "1"})
			other.git("config", "core.fsmonitor", s.prog)
			os.WriteFile(filepath.Join(s.linked, ".git"), []byte("gitdir: "+other.path(".git")+"\n"), 0o644)
		}, file: "wt/.git"},
		{name: "worktree config", linked: true, agent: func(s setup) {
			s.r.write(".git/worktrees/wt/config.worktree", "[core]\n\tfsmonitor = "+s.prog+"\n")
		}, file: ".git/worktrees/wt/config.worktree"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog, marker := evil(t)
			s := setup{r: newRepoWithFiles(t, map[string]string{"a": "1"}), prog: prog}
			dir := s.r.dir
			if c.linked {
				s.linked = s.r.path("wt")
				s.r.git("worktree", "add", "-q", "-b", "wt", s.linked)
				dir = s.linked
			}
			if c.before != nil {
				c.before(s)
			}
			g, err := Protect(ctx, dir)
			if err != nil || g == nil {
				t.Fatalf("protect: %v", err)
			}
			defer g.Release()
			before, err := Snapshot(ctx, dir)
			if err != nil {
				t.Fatalf("snapshot before the agent: %v", err)
			}
			c.agent(s)
			_, err = SnapshotAfter(ctx, dir, before)
			var te *TamperError
			if !errors.As(err, &te) {
				t.Fatalf("snapshot after the agent: %v, want a TamperError", err)
			}
			if want := s.r.path(c.file); te.File != want {
				t.Errorf("the error names %s, want %s", te.File, want)
			}
			if !strings.Contains(err.Error(), te.File) {
				t.Errorf("message %q does not name the file", err)
			}
			if _, err := Backup(ctx, dir, "x"); !errors.As(err, &te) {
				t.Errorf("backup after the change: %v, want a TamperError", err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the agent's program ran")
			}
		})
	}
}

// Empty files where there were none are no change: git reads nothing from
// them, and a sandbox that guards a path by mounting over it leaves one
// behind (Claude Code's own sandbox does, for .git/config.worktree).
func TestGuardTakesAnEmptyFileForNone(t *testing.T) {
	ctx := context.Background()
	r := newRepoWithFiles(t, map[string]string{"a": "1"})
	g, err := Protect(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	before, err := Snapshot(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".git/config.worktree", ".git/hooks/pre-commit", ".git/info/attributes"} {
		r.write(f, "")
	}
	if _, err := SnapshotAfter(ctx, r.dir, before); err != nil {
		t.Errorf("empty files made a change: %v", err)
	}
	// A file of info/ that git does not read is not a change either.
	r.write(".git/info/.claude-sandbox-noreplace", "marker")
	if _, err := SnapshotAfter(ctx, r.dir, before); err != nil {
		t.Errorf("a marker in info/ made a change: %v", err)
	}
	r.write(".git/config.worktree", "[core]\n")
	if _, err := SnapshotAfter(ctx, r.dir, before); err == nil {
		t.Error("a config.worktree with content passed")
	}
}

// The guard pins the git directories: a request's clone is checked too,
// ralph's own change to the configuration is no tampering, and after
// Release nothing is pinned.
func TestGuardPinsAndReleases(t *testing.T) {
	ctx := context.Background()
	r := newRepoWithFiles(t, map[string]string{"a": "1"})
	wt := r.path("wt")
	r.git("worktree", "add", "-q", "-b", "wt", wt)
	g, err := Protect(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := Pinned(filepath.Join(wt, "sub"))
	if !ok || d.GitDir != r.path(".git/worktrees/wt") || d.CommonDir != r.path(".git") || d.GitFile != filepath.Join(wt, ".git") {
		t.Fatalf("pinned %+v %v", d, ok)
	}
	if _, err := Run(ctx, wt, nil, true, "remote", "add", "handover", r.dir); err != nil {
		t.Fatalf("a remote added by ralph: %v", err)
	}
	if _, err := Snapshot(ctx, wt); err != nil {
		t.Fatalf("ralph's own remote counted as tampering: %v", err)
	}
	r.git("config", "core.fsmonitor", "x")
	if _, err := IsClean(ctx, r.dir); !errors.As(err, new(*TamperError)) {
		t.Fatalf("git in the clone after a change to the shared config: %v", err)
	}
	g.Release()
	if _, ok := Pinned(wt); ok {
		t.Fatal("still pinned after Release")
	}
	if _, err := IsClean(ctx, r.dir); err != nil {
		t.Fatalf("after Release: %v", err)
	}
}
