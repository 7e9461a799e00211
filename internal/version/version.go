// Package version holds the build identity of the ralph binary.
package version

import "runtime/debug"

// Version is set at link time (-ldflags "-X ralph/internal/version.Version=v1.2.3").
var Version = "dev"

// String returns the version with the VCS revision when the build recorded one.
func String() string {
	v := Version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		return v + " (" + rev + dirty + ")"
	}
	return v
}
