package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ralph/internal/loop"
	"ralph/internal/store"
)

// A project's state from before it held the agent session adopts the one
// .claude_session_id kept; a current state never reads that file.
func TestSessionStoreMigratesTheSessionFile(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	v3 := `{"version":3,"loop_count":5,"breaker":{"state":"CLOSED"},"agent_session":{"id":"new-1","started":"2026-11-21T10:00:00Z"}}`
	tests := []struct {
		name        string
		state, file string
		want        loop.AgentSession
		warned      bool
	}{
		{"version 2 with the JSON file", `{"version":2,"loop_count":5,"breaker":{"state":"CLOSED"}}`,
			`{"session_id":"old-2","timestamp":"2026-11-20T10:00:00Z"}`, loop.AgentSession{ID: "old-2", Started: at}, false},
		{"version 2 without a file", `{"version":2,"loop_count":5}`, "", loop.AgentSession{}, false},
		{"the counters-only file of older projects", `{"loop_count":5}`,
			`{"session_id":"old-3","created_at":"2026-11-20T10:00:00Z"}`, loop.AgentSession{ID: "old-3", Started: at}, false},
		{"a file without a session", `{"version":2,"loop_count":5}`, "null", loop.AgentSession{}, false},
		{"a corrupt file", `{"version":2,"loop_count":5}`, `{"session_id": "x",`, loop.AgentSession{}, true},
		{"a current state ignores the file", v3, `{"session_id":"old-2","timestamp":"2026-11-20T10:00:00Z"}`,
			loop.AgentSession{ID: "new-1", Started: at.Add(24 * time.Hour)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := store.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := st.EnsureDirs(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(st.LoopStateFile(), []byte(tt.state), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				if err := os.WriteFile(st.AgentSessionFile(), []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var warned []string
			got, found, _, err := sessionStore{st, func(m string) { warned = append(warned, m) }}.LoadState()
			if err != nil || !found || got.Loop != 5 || got.Version != loop.StateVersion {
				t.Fatalf("load: %v %v loop %d version %d", err, found, got.Loop, got.Version)
			}
			if got.Session.ID != tt.want.ID || !got.Session.Started.Equal(tt.want.Started) {
				t.Errorf("session %+v, want %+v", got.Session, tt.want)
			}
			if (len(warned) > 0) != tt.warned {
				t.Errorf("warnings %q", warned)
			}
			if tt.warned {
				kept, _ := filepath.Glob(st.AgentSessionFile() + ".corrupt-*")
				if len(kept) != 1 || !strings.Contains(warned[0], "moved to") {
					t.Errorf("corrupt file not set aside: %v, %q", kept, warned)
				}
			}
		})
	}
}
