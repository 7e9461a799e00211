package github

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestParseIssueRef(t *testing.T) {
	gh := func(owner, name string) Repo { return Repo{Host: "github.com", Owner: owner, Name: name} }
	tests := []struct {
		in      string
		want    IssueRef
		wantErr string
	}{
		{in: "12", want: IssueRef{Number: 12}},
		{in: "#12", want: IssueRef{Number: 12}},
		{in: "  #7 ", want: IssueRef{Number: 7}},
		{in: "octo/hello-world#3", want: IssueRef{Repo: Repo{Owner: "octo", Name: "hello-world"}, Number: 3}},
		{in: "octo/my.repo_x#42", want: IssueRef{Repo: Repo{Owner: "octo", Name: "my.repo_x"}, Number: 42}},
		{in: "https://github.com/octo/hello/issues/5", want: IssueRef{Repo: gh("octo", "hello"), Number: 5}},
		{in: "https://www.github.com/octo/hello/issues/5/", want: IssueRef{Repo: gh("octo", "hello"), Number: 5}},
		{in: "http://github.com/octo/hello/issues/5?x=1#issuecomment-9", want: IssueRef{Repo: gh("octo", "hello"), Number: 5}},
		{in: "github.com/octo/hello/issues/5", want: IssueRef{Repo: gh("octo", "hello"), Number: 5}},
		{in: "https://GHE.Example.com/team/svc/issues/77", want: IssueRef{Repo: Repo{Host: "ghe.example.com", Owner: "team", Name: "svc"}, Number: 77}},
		{in: "https://ghe.example.com:8443/team/svc/issues/1", want: IssueRef{Repo: Repo{Host: "ghe.example.com:8443", Owner: "team", Name: "svc"}, Number: 1}},

		{in: "", wantErr: "empty"},
		{in: "0", wantErr: "not an issue number"},
		{in: "#-1", wantErr: "not a reference"},
		{in: "12a", wantErr: "not a reference"},
		{in: "octo/hello#x", wantErr: "not a reference"},
		{in: "octo/hello#0", wantErr: "not an issue number"},
		{in: "../x#1", wantErr: "want owner/name"},
		{in: "octo/..#1", wantErr: "want owner/name"},
		{in: "https://github.com/octo/hello/pull/5", wantErr: "a pull request"},
		{in: "https://github.com/octo/hello", wantErr: "not an issue URL"},
		{in: "https://github.com/octo/hello/issues/5/comments", wantErr: "not an issue URL"},
		{in: "ftp://github.com/octo/hello/issues/5", wantErr: "not a reference"},
		{in: "99999999999", wantErr: "not an issue number"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseIssueRef(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParseRemoteURL(t *testing.T) {
	tests := []struct {
		in      string
		want    Repo
		wantErr string
	}{
		{in: "https://github.com/octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "https://github.com/octo/hello", want: Repo{"github.com", "octo", "hello"}},
		{in: "https://github.com/octo/hello/\n", want: Repo{"github.com", "octo", "hello"}},
		{in: "http://github.com/octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "https://x-access-token:ghp_secret@github.com/octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "git@github.com:octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "git@github.com:octo/hello", want: Repo{"github.com", "octo", "hello"}},
		{in: "github.com:octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "ssh://git@github.com/octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "ssh://git@ghe.example.com:2222/team/svc.git", want: Repo{"ghe.example.com", "team", "svc"}},
		{in: "git+ssh://git@github.com/octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "git://github.com/octo/hello.git", want: Repo{"github.com", "octo", "hello"}},
		{in: "https://ghe.example.com:8443/team/svc.git", want: Repo{"ghe.example.com:8443", "team", "svc"}},
		{in: "git@ghe.example.com:team/svc.git", want: Repo{"ghe.example.com", "team", "svc"}},

		{in: "", wantErr: "not a URL"},
		{in: "/srv/git/hello.git", wantErr: "not a URL"},
		{in: "https://github.com/octo", wantErr: "want owner/repo"},
		{in: "https://gitlab.example.com/group/sub/proj.git", wantErr: "want owner/repo"},
		{in: "file:///srv/git/hello.git", wantErr: "not a URL"},
		{in: "svn://example.com/octo/hello", wantErr: "unsupported scheme"},
		{in: "https://tok3n@github.com/bad..owner!/x", wantErr: "want owner/name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRemoteURL(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want error containing %q", got, err, tt.wantErr)
				}
				// A remote URL may carry a token: errors never repeat it.
				if strings.Contains(err.Error(), "tok3n") || strings.Contains(err.Error(), "secret") {
					t.Errorf("error leaks the URL's credentials: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParseRepo(t *testing.T) {
	if r, err := ParseRepo("octo/hello.git"); err != nil || r != (Repo{Owner: "octo", Name: "hello"}) {
		t.Errorf("got %+v %v", r, err)
	}
	for _, bad := range []string{"octo", "octo/", "/x", "a/b/c", "-x/y"} {
		if _, err := ParseRepo(bad); err == nil {
			t.Errorf("ParseRepo(%q): no error", bad)
		}
	}
}

func TestAPIBase(t *testing.T) {
	for host, want := range map[string]string{
		"":                     "https://api.github.com",
		"github.com":           "https://api.github.com",
		"www.github.com":       "https://api.github.com",
		"ghe.example.com":      "https://ghe.example.com/api/v3",
		"ghe.example.com:8443": "https://ghe.example.com:8443/api/v3",
	} {
		if got := APIBase(host); got != want {
			t.Errorf("APIBase(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestDefaultRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if _, err := DefaultRepo(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "--github-repo") {
		t.Errorf("no origin: %v", err)
	}
	git("remote", "add", "origin", "git@github.com:octo/hello.git")
	if r, err := DefaultRepo(context.Background(), dir); err != nil || r != (Repo{"github.com", "octo", "hello"}) {
		t.Errorf("got %+v %v", r, err)
	}
}
