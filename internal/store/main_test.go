package store

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the test binary as one of the helper processes the
// process tests start (a lock holder, a writer to kill), or else the tests.
func TestMain(m *testing.M) {
	helpers := []struct {
		env string
		run func(string) error
	}{{"STORE_HELPER_LOCK", lockHolder}, {"STORE_HELPER_WRITE", helperWriter}}
	for _, h := range helpers {
		if p := os.Getenv(h.env); p != "" {
			if err := h.run(p); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}
