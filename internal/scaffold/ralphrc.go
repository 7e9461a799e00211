package scaffold

import (
	"fmt"
	"strings"

	"ralph/internal/config"
)

const ralphrcHeader = `# .ralphrc: ralph's settings for this project.
#
# KEY=value lines, read as data: nothing here is ever run by a shell. Every
# key ralph knows is listed with what it does. Only the settings this project
# chose are set; the others are comments holding ralph's default, so ralph
# follows its own default (also in later versions) until you uncomment a line
# and change it. Precedence: command-line flags, then the environment
# (RALPH_<KEY>), then this file, then the built-in defaults.
`

// Ralphrc renders .ralphrc from the configuration key table, so every key
// ralph understands appears with its real default and documentation, and
// the file cannot drift from the reader. projectName and projectType fill
// PROJECT_NAME and PROJECT_TYPE when not empty; allowedTools, when not nil,
// sets ALLOWED_TOOLS (see AllowedTools); verifyCmd, when not empty, sets
// VERIFY_CMD (see VerifyCommand).
func Ralphrc(projectName, projectType string, allowedTools []string, verifyCmd string) []byte {
	var b strings.Builder
	b.WriteString(ralphrcHeader)
	group := ""
	for _, k := range config.Describe() {
		if k.Group != group {
			group = k.Group
			fmt.Fprintf(&b, "\n# ---- %s ----\n", group)
		}
		value := k.Default
		switch k.Name {
		case "PROJECT_NAME":
			value = projectName
		case "PROJECT_TYPE":
			if projectType != "" {
				value = projectType
			}
		case "VERIFY_CMD":
			value = verifyCmd
		}
		doc, commented := keyComment(k)
		if k.Name == "ALLOWED_TOOLS" && allowedTools != nil {
			value = strings.Join(allowedTools, ",")
			doc += " [written by ralph: the default list plus this project's build, test and lint commands]"
		}
		if k.Name == "VERIFY_CMD" && verifyCmd != "" {
			doc += " [written by ralph: the test command it detected; delete the line to take completions on the agent's word]"
		}
		b.WriteString("# " + doc + "\n")
		line := config.FormatAssignment(k.Name, value)
		if value == "" {
			line = k.Name + "=" // plainer than KEY='' and read the same: not set
		}
		// A default written as a setting would be attributed to this file
		// by --dry-run and pin today's default forever.
		if commented || value == k.Default {
			line = "# " + line
		}
		b.WriteString(line + "\n")
	}
	return []byte(b.String())
}

// keyComment is a key's one-line comment, and whether its assignment is
// written commented out:
//   - inert keys do nothing, so writing them would only mislead; keys ralph
//     does not implement refuse anything but their default;
//   - a repository's .ralphrc may not change the restricted keys (ralph
//     ignores it and warns), so they are shown for reference only;
//   - AGENT_CMD's default follows AGENT_PROVIDER; writing "claude" would pin
//     it and break a later switch of provider.
func keyComment(k config.KeyInfo) (string, bool) {
	doc := strings.TrimSpace(k.Doc)
	var extra []string
	if k.Type == "enum" && len(k.Values) > 0 {
		extra = append(extra, "one of "+strings.Join(k.Values, ", "))
	}
	if k.Flag != "" {
		extra = append(extra, "flag "+k.Flag)
	}
	commented := false
	switch {
	case k.Type == "inert":
		commented = true
	case k.Unsupported != "":
		// Kept so old files read the same, but nothing invites setting it.
		commented = true
		extra = append(extra, "not supported by ralph: "+k.Unsupported+"; only the default is accepted")
	case k.RepoRestricted:
		commented = true
		if !strings.Contains(doc, "environment") {
			extra = append(extra, "set it in the environment, not here")
		}
	case k.Name == "AGENT_CMD":
		commented = true
		extra = append(extra, "unset: follows AGENT_PROVIDER")
	}
	if len(extra) > 0 {
		doc += " [" + strings.Join(extra, "; ") + "]"
	}
	return doc, commented
}
