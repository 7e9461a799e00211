package gemini

import (
	"ralph/internal/agent"
	"ralph/internal/transcript"
)

// LiveParser returns a Process.OnLine that turns `--output-format
// stream-json` lines into live events for emit: the model's text (its
// streamed chunks joined until something else happens), its tool calls
// with their file or command, and errors. It is the renderer of `ralph
// logs` without tool results and summaries, which echo files and repeat
// what the loop reports anyway. dir makes file targets relative.
func LiveParser(dir string, emit func(agent.LiveEvent)) func(line []byte) {
	r := transcript.NewRenderer(transcript.Options{Dir: dir}, agent.LiveKindsOnly(emit))
	return func(line []byte) { _, _ = r.Write(append(line, '\n')) }
}
