package analyze

import "strings"

// Setup failure kinds: the agent could not work at all, and no retry will
// change that until a person fixes its setup.
const (
	SetupAuth  = "auth"  // not logged in, a bad or expired key
	SetupModel = "model" // the model does not exist or is not available
	SetupUsage = "usage" // the CLI refused its command line (an unknown flag)
)

// SetupFailure is an agent that failed for its setup, not its work.
type SetupFailure struct {
	Detected bool   `json:"detected"`
	Kind     string `json:"kind"`
	Message  string `json:"message"`
}

// setupPatterns are the CLIs' own words for a broken setup, lower case.
// They are only looked for in a call that failed, in its final words, its
// error lines and its stderr, never in the prose of a call that worked.
var setupPatterns = []struct{ kind, text string }{
	{SetupAuth, "not logged in"},
	{SetupAuth, "please run /login"},
	{SetupAuth, "invalid api key"},
	{SetupAuth, "invalid x-api-key"},
	{SetupAuth, "incorrect api key"},
	{SetupAuth, "api key not valid"},
	{SetupAuth, "invalid_api_key"},
	{SetupAuth, "authentication_error"},
	{SetupAuth, "oauth token has expired"},
	{SetupAuth, "please set an auth method"},
	{SetupAuth, "401 unauthorized"},
	{SetupAuth, "status 401"},
	{SetupAuth, "(401)"},
	{SetupAuth, "missing api key"},
	{SetupAuth, "could not resolve authentication method"},
	{SetupModel, "model_not_found"},
	{SetupModel, "model not found"},
	{SetupModel, "unknown model"},
	{SetupModel, "invalid model"},
	{SetupModel, "does not exist or you do not have access to it"},
	{SetupModel, "is not a valid model"},
	{SetupUsage, "unknown option"},
	{SetupUsage, "unexpected argument"},
	{SetupUsage, "unrecognized arguments"},
	{SetupUsage, "unknown flag"},
}

// maxSetupText bounds how much of one text is searched.
const maxSetupText = 4096

// setupFailure looks for a broken setup in what a failed call said.
func setupFailure(texts []string) SetupFailure {
	for _, t := range texts {
		if len(t) > maxSetupText {
			t = t[:maxSetupText]
		}
		low := strings.ToLower(t)
		for _, p := range setupPatterns {
			if strings.Contains(low, p.text) {
				return SetupFailure{Detected: true, Kind: p.kind, Message: firstLineOf(strings.TrimSpace(t))}
			}
		}
	}
	return SetupFailure{}
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
