package agent

import (
	"io"

	"ralph/internal/activity"
)

// The live view's names for the activity events every agent's wire
// package decodes its output into.
type (
	LiveEvent = activity.Event
	LiveKind  = activity.Kind
)

// Kinds of events the live view shows.
const (
	LiveText   = activity.Text   // a chunk of the agent's own prose
	LiveTool   = activity.Tool   // a tool call: Tool and Target
	LiveOutput = activity.Output // a raw line of unstructured output
	LiveError  = activity.Error  // the agent reported a failure
)

// RenderLive returns an Invocation.OnEvent that prints events to w (the
// terminal); see activity.Render.
func RenderLive(w io.Writer) func(LiveEvent) { return activity.Render(w) }

// LiveDecoder makes the live parser of an agent from its wire decoder:
// the live view shows the kinds activity marks live, and tool results are
// never decoded.
func LiveDecoder[D activity.Decoder](newDecoder func(*activity.Sink) D) LiveParserFunc {
	return func(dir string, emit func(LiveEvent)) func(line []byte) {
		return newDecoder(activity.NewSink(activity.Options{Dir: dir}, activity.LiveOnly(emit))).Line
	}
}
