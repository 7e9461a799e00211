package activity

import "time"

// Facts receives what an agent's output says about the call, as that
// agent's wire package reads it with its streaming Scanner: the analyzer
// implements it and judges the facts, whatever agent gave them. The
// scanners skip what carries no fact (tool results, file contents) without
// decoding it, so reading a long transcript stays fast and its memory flat.
//
// A string or byte slice handed to a method may alias the line being read
// or a buffer the scanner reuses: it is valid only during the call, and an
// implementation that keeps one copies it.
type Facts interface {
	// Session is the session the output names for the call; the last one
	// named wins.
	Session(id []byte)
	// SessionHint is a session id an event names before the end of the
	// output, in a format whose transcript ends with a Result naming it
	// again: the first one is kept in case that Result never comes.
	SessionHint(id []byte)

	// Text is one text block of the agent's message msgID. Blocks of one
	// message join; msgID is "" for a format that gives messages no ids
	// (only a transcript that ends with a Result gives them).
	Text(msgID, text string)
	// TextDelta is a piece of a message streamed in pieces: they join into
	// one message until an event that is not such a piece.
	TextDelta(text string)
	// Answer is the whole answer of an output that is one document.
	Answer(text string)

	// Tool is one tool call and the command or file it works on.
	Tool(name, command, path string)
	// ToolFailed is the output of a tool call that failed: its head may
	// hold the error the agent is stuck on.
	ToolFailed(output string)
	// ToolTotals are the tool calls and the successful file writes (see
	// WritesFiles) that a format counts without naming single calls: an
	// account of the work only when no calls were seen.
	ToolTotals(calls, writes int)

	// Result is the event that ends the output with its account of the
	// call. failed: it says the call failed; succeeded: it says it did not.
	Result(failed, succeeded bool)
	// ResultText is the final answer a Result carries.
	ResultText(text string, failed bool)
	// Failed says the call or its turn failed, without a Result.
	Failed()
	// Usage is an account of what the call (or one turn of it) consumed;
	// tokens is false when it gives only a cost.
	Usage(u Usage, tokens bool)
	// MessageUsage is what one assistant message consumed, repeated as it
	// streams (the last one wins): the account when no Usage is given.
	MessageUsage(msgID string, u Usage)

	// Error is an error the agent CLI reported, in its own words.
	Error(msg string)
	// ErrorNote is an error a Result lists.
	ErrorNote(msg string)
	// Denied is a tool call the agent was refused, and its command or file.
	Denied(tool, command string)
	// Question is a question the agent asked the person with a question
	// tool it was refused (tool), and the answers it offered.
	Question(tool, text string, options []string)

	// LimitReached says the format flags the call as stopped by a usage
	// limit.
	LimitReached()
	// Limit429 says the provider's API answered with HTTP 429.
	Limit429()
	// LimitRejected is a rate-limit event that refused the call: when the
	// limit resets (zero when not said) and its kind in the agent's words
	// ("five_hour", "seven_day").
	LimitRejected(resetsAt time.Time, kind string)
	// QuotaError is an error object with HTTP status 429: msg is what it
	// says, detail the whole object to look for a reset time in.
	QuotaError(msg, detail string)
	// WindowUsed is how much of a usage window the account has used, as a
	// rate-limit event tells it whether or not it refused the call: the
	// window's kind in the agent's words ("five_hour", "seven_day"), the
	// fraction used (0–1, negative when not said) and when it resets
	// (zero when not said).
	WindowUsed(kind string, used float64, resetsAt time.Time)
}

// Usage is the token usage and cost an agent reports.
type Usage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheReadInputTokens     int64
	CacheCreationInputTokens int64
	CostUSD                  float64
}
