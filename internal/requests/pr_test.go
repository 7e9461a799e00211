package requests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"ralph/internal/fleet"
	"ralph/internal/github/githubtest"
	"ralph/internal/loop"
	"ralph/internal/serve"
)

// prDaemon is the one daemon verb the pull request step uses.
type prDaemon struct {
	Daemon
	urls   map[string]string
	drafts map[string]bool
}

func (d *prDaemon) SetPRURL(session, url string, draft bool) error {
	d.urls[session] = url
	if d.drafts != nil {
		d.drafts[session] = draft
	}
	return nil
}

func TestOpenPRDraftWhileTestsFail(t *testing.T) {
	srv := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: "tok"})
	s := newTestServiceAt(t, srv.URL)
	conv := &fakeConv{}
	s.convFor = func(Request) conversation { return conv }
	d := &prDaemon{urls: map[string]string{}, drafts: map[string]bool{}}
	s.d = d
	ctx := context.Background()
	mk := func(n int) Request {
		r := Request{Key: fmt.Sprintf("github:acme/app#%d", n), Source: "github", Repo: "acme/app", Number: n, Title: "Add X",
			Session: fmt.Sprintf("gh-acme-app-%d", n), Branch: fmt.Sprintf("ralph/github-%d", n)}
		if _, err := s.store.Create(r, Entry{ID: "opening", Author: "alice", Body: "b"}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	last := func() string { return conv.posts[len(conv.posts)-1].text }

	// Failing tests: a draft, said so in the pull request and the link.
	r := mk(1)
	failingView := serve.TaskView{State: fleet.Done, History: []serve.HistoryItem{{StatusBlock: map[string]string{"TESTS_STATUS": "FAILING", "EXIT_SIGNAL": "true"}, TestsStatus: "FAILING"}}}
	failing := Decide(failingView)
	if !failing.TestsFailing {
		t.Fatal("Decide: TESTS_STATUS FAILING not read")
	}
	if err := s.openPR(ctx, &r, failingView, failing, "main", "<!-- ralph:t1/complete/3 -->"); err != nil {
		t.Fatal(err)
	}
	pulls := srv.Pulls("acme/app")
	if len(pulls) != 1 || !pulls[0].Draft || pulls[0].Head != "ralph/github-1" || !strings.Contains(pulls[0].Body, "Draft") {
		t.Fatalf("pulls %+v: want one draft", pulls)
	}
	if !d.drafts[r.Session] {
		t.Error("the task was not told its pull request is a draft")
	}
	if !strings.Contains(last(), "Draft pull request") || !strings.Contains(last(), "tests failing") || d.urls[r.Session] != r.PRURL || r.PRURL == "" {
		t.Fatalf("link %q, url %q / %q", last(), d.urls[r.Session], r.PRURL)
	}

	// A follow-up with the tests passing finds the same pull request.
	passingView := serve.TaskView{State: fleet.Done, History: []serve.HistoryItem{{StatusBlock: map[string]string{"TESTS_STATUS": "PASSING"}, TestsStatus: "PASSING"}}}
	if err := s.openPR(ctx, &r, passingView, Decide(passingView), "main", "<!-- ralph:t2/complete/5 -->"); err != nil {
		t.Fatal(err)
	}
	if pulls := srv.Pulls("acme/app"); len(pulls) != 1 {
		t.Fatalf("pulls %+v: want the same one", pulls)
	}

	// Passing (or unreported) tests: a ready pull request.
	r2 := mk(2)
	if err := s.openPR(ctx, &r2, serve.TaskView{State: fleet.Done}, Decide(serve.TaskView{State: fleet.Done}), "main", "<!-- ralph:t3/complete/1 -->"); err != nil {
		t.Fatal(err)
	}
	pulls = srv.Pulls("acme/app")
	if len(pulls) != 2 || pulls[1].Draft || strings.Contains(pulls[1].Body, "Draft") || !strings.HasPrefix(last(), "🚀 Pull request: ") {
		t.Fatalf("pulls %+v, link %q: want a ready one", pulls, last())
	}
	if d.drafts[r2.Session] {
		t.Error("a ready pull request's task was told it is a draft")
	}
}

// With a verify command the check decides: a failed one opens a draft
// holding its output; a later claim that passes marks that draft ready.
func TestOpenPRFollowsTheCheck(t *testing.T) {
	srv := githubtest.Start(t, githubtest.Data{Repos: map[string][]githubtest.Issue{"acme/app": nil}, Token: "tok"})
	s := newTestServiceAt(t, srv.URL)
	conv := &fakeConv{}
	s.convFor = func(Request) conversation { return conv }
	s.d = &prDaemon{urls: map[string]string{}}
	ctx := context.Background()
	r := Request{Key: "github:acme/app#7", Source: "github", Repo: "acme/app", Number: 7, Title: "Add X", Session: "gh-7", Branch: "ralph/github-7"}
	if _, err := s.store.Create(r, Entry{ID: "opening", Author: "alice", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	failed := serve.TaskView{State: fleet.Waiting, LoopCount: 3, CostUSD: 1.5, History: []serve.HistoryItem{
		{StatusBlock: map[string]string{"PR_READY": "true", "TESTS_STATUS": "PASSING"}, PRReady: true, TestsStatus: "PASSING", Verify: &loop.VerifyRun{Command: "make test", ExitCode: 2, Tail: "FAIL: TestX"}}}}
	if err := s.openPR(ctx, &r, failed, Decide(failed), "main", "<!-- ralph:t1/complete/3 -->"); err != nil {
		t.Fatal(err)
	}
	pulls := srv.Pulls("acme/app")
	if len(pulls) != 1 || !pulls[0].Draft || !strings.Contains(pulls[0].Body, "FAIL: TestX") || !strings.Contains(pulls[0].Body, "| 3 | $1.50 | no (exited 2) |") {
		t.Fatalf("pulls %+v: want a draft with the check's output and the receipt", pulls)
	}
	if post := conv.posts[len(conv.posts)-1].text; !strings.Contains(post, "Draft pull request (ralph's check `make test` exited 2)") {
		t.Errorf("post %q", post)
	}
	passed := serve.TaskView{State: fleet.Done, LoopCount: 4, History: []serve.HistoryItem{
		{StatusBlock: map[string]string{}, Verify: &loop.VerifyRun{Command: "make test"}, Verified: true}}}
	if err := s.openPR(ctx, &r, passed, Decide(passed), "main", "<!-- ralph:t1/complete/4 -->"); err != nil {
		t.Fatal(err)
	}
	if pulls := srv.Pulls("acme/app"); len(pulls) != 1 || pulls[0].Draft || len(srv.Readied()) != 1 {
		t.Fatalf("pulls %+v, readied %v: want the same one, ready", pulls, srv.Readied())
	}
	if post := conv.posts[len(conv.posts)-1].text; !strings.Contains(post, "verified (`make test` passed)") {
		t.Errorf("post %q", post)
	}
}
