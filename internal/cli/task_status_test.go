package cli

import (
	"bytes"
	"strings"
	"testing"

	"ralph/internal/requests"
	"ralph/internal/serve"
)

func TestTaskStatusNext(t *testing.T) {
	for _, tc := range []struct {
		name string
		view serve.TaskView
		want string
	}{
		{"halted", serve.TaskView{Session: "api", State: "halted"}, "next: ralph task reset api, then ralph task loop api [MAX]"},
		{"waiting on a budget of loops", serve.TaskView{Session: "api", State: "waiting"}, "next: ralph task loop api [MAX]"},
		{"waiting for review", serve.TaskView{Session: "api", State: "waiting", Message: requests.WaitingForReview},
			"next: a review or a failing check on the pull request (or ralph task retry api for a round now)"},
		{"question", serve.TaskView{Session: "api", State: "waiting", Questions: []string{"which port?"}}, "answer with: ralph task answer api TEXT…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printTaskStatus(&b, tc.view)
			out := b.String()
			if !strings.Contains(out, tc.want) {
				t.Fatalf("status lacks %q:\n%s", tc.want, out)
			}
			if tc.name != "waiting on a budget of loops" && strings.Contains(out, "next: ralph task loop api [MAX]\n") && tc.view.State == "waiting" {
				t.Fatalf("status offers a loop:\n%s", out)
			}
		})
	}
}
