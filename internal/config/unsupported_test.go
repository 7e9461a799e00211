package config

import (
	"slices"
	"strings"
	"testing"
)

// No setting is taken and then ignored: every key ralph does not implement
// refuses any value but its default, from every source, naming why.
func TestUnsupportedKeysRefuseNonDefaults(t *testing.T) {
	var n int
	for _, k := range Describe() {
		if k.Unsupported == "" {
			continue
		}
		n++
		if k.Flag != "" {
			t.Errorf("%s advertises the flag %s, which does nothing", k.Name, k.Flag)
		}
		resolve := func(v string) error {
			rc := Layer{k.Name: Entry{Key: k.Name, Value: v, Source: Source{Kind: SourceRC, File: ".ralphrc", Line: 3, Name: k.Name}}}
			_, _, err := Resolve(Defaults(), rc, nil, nil)
			return err
		}
		if k.Default != "" {
			if err := resolve(k.Default); err != nil {
				t.Errorf("%s at its default %q: %v", k.Name, k.Default, err)
			}
		}
		candidates := []string{"true", "7", "1.5", "x"}
		for _, v := range k.Values {
			if v != k.Default {
				candidates = append([]string{v}, candidates...)
			}
		}
		refused := false
		for _, v := range candidates {
			if v == k.Default {
				continue
			}
			if err := resolve(v); err != nil && strings.Contains(err.Error(), "not supported by ralph") {
				if !strings.Contains(err.Error(), ".ralphrc:3") || !strings.Contains(err.Error(), k.Unsupported) {
					t.Errorf("%s: %v", k.Name, err)
				}
				refused = true
				break
			}
		}
		if !refused {
			t.Errorf("%s: no non-default value was refused", k.Name)
		}
	}
	if n < 25 {
		t.Errorf("only %d unsupported keys", n)
	}
}

// Keys that are implemented are read somewhere: a spot check that the
// supported sandbox keys are not marked.
func TestSandboxKeysSupported(t *testing.T) {
	for _, name := range []string{"SANDBOX_PROVIDER", "SANDBOX_NETWORK"} {
		k, ok := Lookup(name)
		if !ok || k.Unsupported != "" {
			t.Errorf("%s: %+v", name, k)
		}
		if name == "SANDBOX_PROVIDER" && !slices.Contains(k.Values, "bwrap") {
			t.Errorf("SANDBOX_PROVIDER values %v", k.Values)
		}
	}
}
