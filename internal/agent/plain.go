package agent

// LiveLines is the live parser of an agent without structured events:
// every output line is shown as it is.
func LiveLines(emit func(LiveEvent)) func(line []byte) {
	return func(line []byte) {
		emit(LiveEvent{Kind: LiveOutput, Text: string(line)})
	}
}
