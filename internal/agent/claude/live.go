package claude

import (
	"ralph/internal/agent"
	"ralph/internal/agent/claude/wire"
)

// LiveParser turns Claude Code's stream-json lines into live events as they arrive, decoded
// by package wire; dir makes file targets relative.
var LiveParser = agent.LiveDecoder(wire.NewDecoder)
