package main

import (
	"os/exec"
	"strings"
	"testing"
)

// Test fakes live beside what they fake as xxxtest packages and stay out of
// the binary; the fake model API ships only because `ralph demo` serves its
// model from it.
func TestBinaryHoldsNoTestPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	shipsForTheDemo := map[string]bool{"ralph/internal/fakeapi": true}
	var seen int
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, "ralph/") {
			continue
		}
		seen++
		last := pkg[strings.LastIndex(pkg, "/")+1:]
		if (strings.HasSuffix(last, "test") || strings.HasPrefix(last, "fake")) && !shipsForTheDemo[pkg] {
			t.Errorf("the binary links %s, a package for tests", pkg)
		}
	}
	if seen < 20 {
		t.Fatalf("go list named %d of ralph's packages; is this the main package?", seen)
	}
}
