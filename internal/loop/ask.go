package loop

// Ask is a question the agent asked a person, and the answer once given.
type Ask struct {
	// Loop is the call that asked: an answer names it, so an answer meant
	// for an earlier question never answers a later one.
	Loop      int      `json:"loop"`
	Questions []string `json:"questions,omitempty"`
	// Answer goes into the next call's prompt; By says who gave it.
	Answer string `json:"answer,omitempty"`
	By     string `json:"by,omitempty"`
}

// Waiting reports a question that has no answer yet.
func (a Ask) Waiting() bool { return a.Loop > 0 && a.Answer == "" }

// Answer gives the question the call to asked its answer, for the next
// call's prompt; ok is false when the state waits for no such answer (it
// was answered, or the answer is for an earlier question). Next applies an
// answer a running loop receives (Control.Answer); a host applies one that
// comes while no loop runs to the saved state, and the next run goes on
// with it.
func Answer(st State, to int, text, by string) (State, bool) {
	if !st.Ask.Waiting() || st.Ask.Loop != to || text == "" {
		return st, false
	}
	st = st.clone()
	st.Ask.Answer, st.Ask.By = text, by
	return st, true
}
