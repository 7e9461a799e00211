package serve

import (
	"ralph/internal/redact"
	"ralph/internal/store"
	"ralph/internal/taskfile"
)

// The daemon keeps and serves the agents' words (status blocks, questions,
// summaries, messages) and people's (titles, answers). Every secret ralph
// knows is masked in them where they leave the daemon's memory: the
// database, the task files and the prompts on the way in, the task views,
// the API's replies and the event stream on the way out (docs/security.md,
// "Secrets").

// maskTask is t as the database keeps it.
func maskTask(t Task) Task {
	t.Title, t.Message = redact.String(t.Title), redact.String(t.Message)
	t.Questions = maskStrings(t.Questions)
	return t
}

// maskView is v as it is served: the API, the dashboard, the chats.
func maskView(v TaskView) TaskView {
	v.Title, v.Message, v.Summary, v.Activity = redact.String(v.Title), redact.String(v.Message), redact.String(v.Summary), redact.String(v.Activity)
	v.Questions = maskStrings(v.Questions)
	for i, p := range v.Pending {
		v.Pending[i].What, v.Pending[i].Options = redact.String(p.What), maskStrings(p.Options)
	}
	v.CircuitBreaker.Reason = redact.String(v.CircuitBreaker.Reason)
	v.CircuitBreaker.ErrorHistory = maskStrings(v.CircuitBreaker.ErrorHistory)
	for i, h := range v.History {
		v.History[i].StatusBlock = maskMap(h.StatusBlock)
		if h.Verify != nil {
			run := *h.Verify
			run.Command, run.Tail = redact.String(run.Command), redact.String(run.Tail)
			v.History[i].Verify = &run
		}
	}
	return v
}

func maskStrings(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = redact.String(s)
	}
	return out
}

func maskMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = redact.String(v)
	}
	return out
}

func maskFields(in []taskfile.Field) []taskfile.Field {
	if in == nil {
		return nil
	}
	out := make([]taskfile.Field, len(in))
	for i, f := range in {
		out[i] = taskfile.Field{Key: f.Key, Value: redact.String(f.Value)}
	}
	return out
}

// writeTaskFile replaces a task file with data, the known secrets masked
// by value: the file is the agent's too (its checklist), so its text keeps
// its form otherwise.
func writeTaskFile(path string, data []byte) error {
	return store.WriteFileAtomic(path, []byte(redact.Values(string(data))), 0o644)
}
