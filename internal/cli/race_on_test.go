//go:build race

package cli

// raceEnabled: the daemon under test is built with -race too, so a data
// race between its loops fails the end-to-end tests.
const raceEnabled = true
