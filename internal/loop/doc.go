// Package loop is ralph's loop as data: the [State] document a loop carries
// from one iteration to the next, and the two pure functions that decide over
// it.
//
//	Next(State, Observation, Policy) → State', Step     before a call: Call | Wait | Stop
//	Fold(State, Iteration, Policy)   → State', Decision after a call
//
// Neither reads a clock, touches a file or mutates its input: time and the
// world come in as values (the observation, the iteration) and the answer
// goes out as a value. So the same decisions run in `ralph run` (the local
// interpreter in internal/engine), in `ralph serve` (many interpreters, one
// per task) and inside a durable workflow, and a recorded run can be
// replayed through them.
//
// A [Spec] is everything a host needs to start a loop, as plain data (no
// adapters, no callbacks); [Event] and [Metrics] are what a loop tells its
// observers and records per iteration.
package loop
