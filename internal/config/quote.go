package config

import (
	"strings"

	"ralph/internal/shellwords"
)

// QuoteValue writes v so that ParseRalphrc reads it back unchanged: bare when
// that is safe, otherwise in single quotes (a ' inside becomes '\”). The
// .ralphrc template and Config.String use it.
func QuoteValue(v string) string {
	safe := v != ""
	for i := 0; i < len(v) && safe; i++ {
		c := v[i]
		safe = shellwords.IsNameByte(c, false) || strings.IndexByte("-./:@%+,=", c) >= 0
	}
	if safe {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// FormatAssignment renders one .ralphrc line, KEY=value, with value quoted as
// QuoteValue does.
func FormatAssignment(key, value string) string { return key + "=" + QuoteValue(value) }
