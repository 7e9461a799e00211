package cli

import "context"

// Every command is built by newXCmd(ios, runF): flags and arguments are
// parsed into an options struct, which runF gets. Flag tests pass a runF that
// records the options; nil is the command's real run function.

// orDefault is runF, or run when runF is nil.
func orDefault[O any](runF, run func(context.Context, *O) error) func(context.Context, *O) error {
	if runF != nil {
		return runF
	}
	return run
}
