package loop

import "ralph/internal/agent"

// TEMPORARY until agent.Capabilities.Missing lands.
type capsMissing struct{ agent.Capabilities }

func (c capsMissing) Missing() []string { return nil }
