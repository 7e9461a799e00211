package cli

import (
	"slices"
	"testing"

	"ralph/internal/dashboard"
	"ralph/internal/fleet"
	"ralph/internal/requests"
	"ralph/internal/serve"
	"ralph/internal/telegram"
)

// Every surface offers every command of the fleet, or says why it does
// not: a verb added to fleet.Verbs must reach the CLI, the API, the
// dashboard, Telegram and the requests, or this names the surface that
// lacks it. (The watchdog takes no commands: it watches an agent a person
// drives, and ends a task only as its observations say.)
func TestEverySurfaceOffersEveryVerb(t *testing.T) {
	cli := map[fleet.Verb]string{}
	task := newTaskCmd(IO{}, nil)
	for _, c := range task.Commands() {
		if slices.Contains(fleet.Verbs(), fleet.Verb(c.Name())) {
			cli[fleet.Verb(c.Name())] = "ralph task " + c.Name()
		}
		if c.Name() == "start" && c.Flags().Lookup("loop") != nil {
			cli[fleet.StartLoop] = "ralph task start --loop N"
		}
	}
	rqOffers, rqLacks := requests.FleetVerbs()
	for _, s := range []struct {
		name          string
		offers, lacks map[fleet.Verb]string
	}{
		{"ralph task", cli, nil},
		{"the API", serve.APIVerbs(), nil},
		{"the dashboard", dashboard.FleetVerbs(), nil},
		{"Telegram", telegram.FleetVerbs(), nil},
		{"GitHub and Slack requests", rqOffers, rqLacks},
	} {
		for _, v := range fleet.Verbs() {
			how, offered := s.offers[v]
			why, lacked := s.lacks[v]
			switch {
			case offered && lacked:
				t.Errorf("%s both offers %s (%s) and lacks it (%s)", s.name, v, how, why)
			case !offered && !lacked:
				t.Errorf("%s neither offers %s nor says why not", s.name, v)
			case offered && how == "", lacked && why == "":
				t.Errorf("%s: %s without a word of how or why", s.name, v)
			}
		}
		for v := range s.offers {
			if !slices.Contains(fleet.Verbs(), v) {
				t.Errorf("%s offers %q, which is no fleet command", s.name, v)
			}
		}
	}
}
