package requests

import (
	"context"
	"net/http"
)

// slackSide will be the Slack end of requests (DESIGN.md's slack row:
// Socket Mode or the Events API, replies in the thread). Until it is
// built, New leaves it nil and says so in the log.
type slackSide struct{}

func (s *Service) socketMode(ctx context.Context) { <-ctx.Done() }

func (*slackSide) Post(context.Context, Request, string, string) (string, error) { return "", nil }
func (*slackSide) Edit(context.Context, Request, string, string, string) error   { return nil }

// SlackWebhookPath is where the Events API will deliver.
const SlackWebhookPath = "/webhooks/slack"

func (s *Service) slackWebhook(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "Slack requests are not supported yet", http.StatusNotImplemented)
}
