package agent

// LiveLines is the live parser of an agent without structured events:
// every output line is shown as it is.
func LiveLines(emit func(LiveEvent)) func(line []byte) {
	return func(line []byte) {
		emit(LiveEvent{Kind: LiveOutput, Text: string(line)})
	}
}

// LiveKindsOnly passes on only events of the kinds this package defines:
// renderers of saved transcripts add kinds of their own (tool results,
// summaries) that the live view does not show.
func LiveKindsOnly(emit func(LiveEvent)) func(LiveEvent) {
	return func(e LiveEvent) {
		switch e.Kind {
		case LiveText, LiveTool, LiveOutput, LiveError:
			emit(e)
		}
	}
}
