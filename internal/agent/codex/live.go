package codex

import (
	"ralph/internal/agent"
	"ralph/internal/agent/codex/wire"
)

// LiveParser turns `codex exec --json` lines into live events as they arrive, decoded
// by package wire; dir makes file targets relative.
var LiveParser = agent.LiveDecoder(wire.NewDecoder)
