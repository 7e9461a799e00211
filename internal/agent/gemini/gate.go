package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"ralph/internal/agent"
	"ralph/internal/gate"
)

// HomeEnv moves the home directory Gemini CLI reads its settings, skills
// and sessions from.
const HomeEnv = "GEMINI_CLI_HOME"

// gateHome starts the call with ralph's gate as an MCP server. Gemini CLI
// takes MCP servers only from settings files, has no flag for one, and
// skips a system settings file in a directory others may write to (a
// temp directory), so the call gets a home of its own (GEMINI_CLI_HOME,
// in the call directory): every entry of the user's home and of its
// .gemini is a link to the real one, except .gemini/settings.json, which
// is the user's settings with ralph's server added. Sessions, credentials
// and the rest are read and written where they always are; the user's
// files are left as they are. The session directories are made first, so
// that a session the call starts outlives it (ralph resumes it).
//
// Gemini hands a server only the variables its entry names (and strips
// those that look like a secret), so the bridge's two are named, expanded
// from the call's environment: the secret is in no file. trust skips the
// confirmation a tool call needs outside yolo mode; includeTools leaves
// approve out, since Gemini has no permission prompt tool to make of it
// (docs/agents.md); timeout (milliseconds, 10 minutes unless set)
// outlasts a person's wait. Checked with Gemini CLI 0.61.0.
func gateHome(inv agent.Invocation) func(string) ([]string, error) {
	s, ok := inv.Gate.(interface{ Stdio() gate.StdioServer })
	if !ok || inv.Gate == nil {
		return nil
	}
	return func(callDir string) ([]string, error) {
		realHome, ok := lookupEnv(inv.Env, HomeEnv)
		if !ok || realHome == "" {
			realHome, _ = lookupEnv(inv.Env, "HOME")
		}
		if realHome == "" {
			return nil, errors.New("gemini: no home directory (HOME) to find Gemini's settings in")
		}
		home := filepath.Join(callDir, "gemini-home")
		if err := mirror(realHome, home, ".gemini"); err != nil {
			return nil, err
		}
		real := filepath.Join(realHome, ".gemini")
		for _, d := range []string{"tmp", "history"} {
			if err := os.MkdirAll(filepath.Join(real, d), 0o700); err != nil {
				return nil, fmt.Errorf("gemini: %w", err)
			}
		}
		if err := mirror(real, filepath.Join(home, ".gemini"), "settings.json"); err != nil {
			return nil, err
		}
		settings, err := readSettings(filepath.Join(real, "settings.json"))
		if err != nil {
			return nil, err
		}
		srv := s.Stdio()
		env := map[string]string{}
		for _, name := range srv.Env {
			env[name] = "$" + name
		}
		servers, _ := settings["mcpServers"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		servers[gate.ServerName] = map[string]any{
			"command": srv.Command, "args": srv.Args, "env": env, "trust": true,
			"includeTools": []string{gate.ToolAsk}, "timeout": srv.ToolTimeout.Milliseconds(),
		}
		settings["mcpServers"] = servers
		b, err := json.MarshalIndent(settings, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("gemini: %w", err)
		}
		if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o600); err != nil {
			return nil, fmt.Errorf("gemini: %w", err)
		}
		return []string{HomeEnv + "=" + home}, nil
	}
}

// mirror makes dir with a link to each entry of real but skip (real may
// not exist yet).
func mirror(real, dir, skip string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("gemini: %w", err)
	}
	entries, err := os.ReadDir(real)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gemini: %w", err)
	}
	for _, e := range entries {
		if e.Name() == skip {
			continue
		}
		if err := os.Symlink(filepath.Join(real, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("gemini: %w", err)
		}
	}
	return nil
}

// readSettings reads a Gemini settings file, which may hold comments as
// Gemini allows; a missing file is empty settings.
func readSettings(path string) (map[string]any, error) {
	settings := map[string]any{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return settings, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return settings, nil
	}
	if err := json.Unmarshal(stripComments(b), &settings); err != nil {
		return nil, fmt.Errorf("gemini: %s: ralph adds its gate's MCP server to these settings for each call and cannot read them: %w", path, err)
	}
	return settings, nil
}

// stripComments blanks // and /* */ comments outside strings.
func stripComments(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			end := min(j+1, len(b))
			out = append(out, b[i:end]...)
			i = end - 1
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(string(b[i+2:]), "*/")
			if end < 0 {
				return out
			}
			i += 2 + end + 1
			out = append(out, ' ')
		default:
			out = append(out, b[i])
		}
	}
	return out
}

// lookupEnv finds key in the call's environment, else in ralph's.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return os.LookupEnv(key)
}
