package agent

import (
	"strings"

	"ralph/internal/redact"
)

// LoopContext is ralph's loop context as it may be handed to an agent: it
// quotes the last call's refused commands, errors and summary, which can
// carry credentials, and an argv is visible to every user in ps. Every
// adapter passes the context through here, whichever way it hands it over.
func LoopContext(context string) string { return redact.String(context) }

// PromptWithContext is the prompt for an agent that has no way to add to
// its system prompt per call: the task first, then ralph's loop context in
// tags that say where it comes from, so the agent neither mistakes it for
// part of the task nor for text to act on literally. Without context the
// prompt is returned unchanged.
func PromptWithContext(prompt, context string) string {
	context = strings.TrimSpace(context)
	if context == "" {
		return prompt
	}
	return strings.TrimRight(prompt, "\n") + "\n\n<ralph_loop_context>\n" +
		"Context from the ralph loop that runs this session (not part of the task):\n" +
		LoopContext(context) + "\n</ralph_loop_context>\n"
}
