package cli

import (
	"path/filepath"
	"sync"

	"ralph/internal/serve"
	"ralph/internal/temporal"
	"ralph/internal/trust"
)

// hidden are the files this process was given that no sandboxed agent
// may see (a daemon's home and config file, a worker's TLS key), on top of
// those every ralph knows (agentHidden).
var hidden struct {
	sync.Mutex
	paths []string
}

// hideFromAgents keeps paths out of every sandbox from now on, as
// agent.Withhold does for environment variables.
func hideFromAgents(paths ...string) {
	hidden.Lock()
	defer hidden.Unlock()
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			hidden.paths = append(hidden.paths, abs)
		}
	}
}

// hideConn hides a Temporal connection's certificate and key files.
func hideConn(c temporal.Conn) { hideFromAgents(c.Cert, c.Key) }

// agentHidden is what sandbox.Spec.Hide lists for an agent of this
// process: ralph's home wherever it lives (the API token, the database,
// serve.conf, requests' clones), the trust store, and what the process
// was given (hideFromAgents).
func agentHidden() []string {
	var out []string
	if h, err := serve.DefaultHome(); err == nil {
		out = append(out, h)
	}
	if st, err := trust.Default(); err == nil {
		// ralph's own directory whole, so that a store not written yet
		// cannot be planted; a store the user put elsewhere, the file.
		if d := filepath.Dir(st.Path); filepath.Base(d) == "ralph" {
			out = append(out, d)
		} else {
			out = append(out, st.Path)
		}
	}
	hidden.Lock()
	defer hidden.Unlock()
	return append(out, hidden.paths...)
}
