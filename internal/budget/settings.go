package budget

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The settings' names, in the daemon's environment or its config file.
const (
	EnvFleetCost     = "RALPH_FLEET_MAX_COST_PER_DAY"
	EnvSessionCost   = "RALPH_SESSION_MAX_COST_PER_DAY"
	EnvFleetTokens   = "RALPH_FLEET_MAX_TOKENS_PER_DAY"
	EnvSessionTokens = "RALPH_SESSION_MAX_TOKENS_PER_DAY"
	EnvZone          = "BUDGET_TIMEZONE"
)

// Names are the settings this package reads.
var Names = []string{EnvFleetCost, EnvSessionCost, EnvFleetTokens, EnvSessionTokens, EnvZone}

// Config is the daemon's budgets and the zone their days are counted in.
type Config struct {
	Limits Limits
	Zone   *time.Location
}

// FromEnv reads the settings; an unset or empty one is no budget (the
// zone: the machine's). A bad value is an error naming the setting.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{Zone: time.Local}
	for _, name := range Names {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		if err := c.set(name, v); err != nil {
			return Config{}, fmt.Errorf("%s=%q: %w", name, v, err)
		}
	}
	return c, nil
}

// Check validates one setting of a config file (nil for a name that is
// not a budget's), so the file's error can name its line.
func Check(name, value string) error {
	var c Config
	for _, n := range Names {
		if n == name && strings.TrimSpace(value) != "" {
			return c.set(name, strings.TrimSpace(value))
		}
	}
	return nil
}

func (c *Config) set(name, v string) error {
	switch name {
	case EnvZone:
		z, err := time.LoadLocation(v)
		if err != nil || v == "Local" {
			return fmt.Errorf("want an IANA time zone name like Europe/Berlin or UTC")
		}
		c.Zone = z
	case EnvFleetCost, EnvSessionCost:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("want US dollars, like 12.50 (0: no budget)")
		}
		if name == EnvFleetCost {
			c.Limits.FleetCost = f
		} else {
			c.Limits.SessionCost = f
		}
	case EnvFleetTokens, EnvSessionTokens:
		n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("want a whole number of tokens, like 2000000 (0: no budget)")
		}
		if name == EnvFleetTokens {
			c.Limits.FleetTokens = n
		} else {
			c.Limits.SessionTokens = n
		}
	}
	return nil
}
