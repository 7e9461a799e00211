package doctor

import (
	"fmt"
	"os"

	"ralph/internal/config"
	"ralph/internal/scaffold"
)

// NameVerify is the verify gate's check.
const NameVerify = "verify"

// checkVerify says whether completions are checked. A project without a
// VERIFY_CMD is not gated (the agent's word ends the run); doctor suggests
// the test command it detects, for the user to set.
func checkVerify(p Project) Check {
	c := p.Config
	if c.VerifyCmd != "" {
		return Check{Name: NameVerify, Status: OK, Detail: fmt.Sprintf("VERIFY_CMD %q (%s): every completion is checked, within %s; %d failed claims in a row end the run (verify_failed, exit 9)",
			c.VerifyCmd, sourceOf(c, "VERIFY_CMD"), c.VerifyTimeout, c.VerifyMaxFailures)}
	}
	detail := "no VERIFY_CMD: a completion stands on the agent's word"
	if stacks, err := scaffold.Detect(os.DirFS(p.Dir)); err == nil {
		if cmd := scaffold.VerifyCommand(stacks); cmd != "" {
			// Worth a warning only where there is something to set.
			return Check{Name: NameVerify, Status: Warn,
				Detail: detail + "; set one, e.g. VERIFY_CMD=" + config.QuoteValue(cmd) + " in .ralphrc (or --verify-cmd)"}
		}
	}
	return Check{Name: NameVerify, Status: OK, Detail: detail + " (no test command detected to suggest)"}
}

func sourceOf(c config.Config, key string) string {
	if s, ok := c.Sources[key]; ok && s.String() != "" {
		return s.String()
	}
	return "default"
}
