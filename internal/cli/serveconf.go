package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"ralph/internal/redact"
	"ralph/internal/serve"
)

// applyServeConf reads the daemon's config file into o: a flag given on the
// command line wins over the file, the file over the defaults. The file's
// other settings become environment defaults (the environment wins), so
// every integration and every session's RALPH_<KEY> reads them the same
// way. An explicit --config must exist; the default one may not.
func applyServeConf(o *serveOptions, home serve.Home) error {
	path, explicit := o.Config, o.Config != ""
	if !explicit {
		path = home.ConfFile()
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	c, err := serve.ParseConf(path, data)
	if err != nil {
		return err
	}
	if c.Secret && fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s holds a credential but other users may read it (mode %04o): chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if c.Listen != "" && !slices.Contains(o.Given, "listen") {
		o.Listen = c.Listen
	}
	if c.MaxParallel > 0 && !slices.Contains(o.Given, "max-parallel") {
		o.MaxParallel = c.MaxParallel
	}
	if c.MaxConns > 0 && !slices.Contains(o.Given, "max-connections") {
		o.MaxConns = c.MaxConns
	}
	if c.MetricsListen != "" && !slices.Contains(o.Given, "metrics-listen") {
		o.MetricsListen = c.MetricsListen
	}
	if c.HistoryDaysSet && !slices.Contains(o.Given, "history-days") {
		o.HistoryDays = c.HistoryDays
	}
	o.confSessions = c.Sessions
	for _, e := range c.Env {
		redactIfSecret(e.Key, e.Value)
		if _, set := os.LookupEnv(e.Key); set {
			continue
		}
		if err := os.Setenv(e.Key, e.Value); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", path, e.Line, e.Key, err)
		}
	}
	return nil
}

func redactIfSecret(key, value string) {
	if redact.IsSecretName(key) && value != "" {
		redact.Add(value)
	}
}
