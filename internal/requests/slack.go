package requests

import (
	"context"
	"net/http"
)

// slackSide is the Slack end of requests (slack_*.go).
type slackSide struct{}

func newSlackSide(SlackConfig, *http.Client) (*slackSide, error) { return &slackSide{}, nil }

func (s *Service) socketMode(ctx context.Context) { <-ctx.Done() }

func (*slackSide) Post(ctx context.Context, r Request, marker, text string) (string, error) {
	return "", nil
}
func (*slackSide) Edit(ctx context.Context, r Request, ref, marker, text string) error { return nil }

// SlackWebhookPath is where the Events API delivers.
const SlackWebhookPath = "/webhooks/slack"

func (s *Service) slackWebhook(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "not yet", http.StatusNotImplemented)
}
