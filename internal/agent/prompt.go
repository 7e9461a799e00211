package agent

import "strings"

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
		context + "\n</ralph_loop_context>\n"
}
