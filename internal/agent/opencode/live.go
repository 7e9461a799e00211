package opencode

import (
	"ralph/internal/agent"
	"ralph/internal/agent/opencode/wire"
)

// LiveParser turns `opencode run --format json` lines into live events as they arrive, decoded
// by package wire; dir makes file targets relative.
var LiveParser = agent.LiveDecoder(wire.NewDecoder)
