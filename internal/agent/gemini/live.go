package gemini

import (
	"ralph/internal/agent"
	"ralph/internal/agent/gemini/wire"
)

// LiveParser turns Gemini CLI's stream-json lines into live events as they arrive, decoded
// by package wire; dir makes file targets relative.
var LiveParser = agent.LiveDecoder(wire.NewDecoder)
