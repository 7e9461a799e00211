package codex

import (
	"ralph/internal/agent"
	"ralph/internal/transcript"
)

// LiveParser returns a Process.OnLine that turns `codex exec --json` lines
// into live events for emit: the agent's messages, its commands, file
// changes and other tool calls, and its errors. It is the renderer of
// `ralph logs` without tool results and turn summaries, which echo files
// and repeat what the loop reports anyway. dir makes file targets relative.
func LiveParser(dir string, emit func(agent.LiveEvent)) func(line []byte) {
	r := transcript.NewRenderer(transcript.Options{Dir: dir}, agent.LiveKindsOnly(emit))
	return func(line []byte) { _, _ = r.Write(append(line, '\n')) }
}
