//go:build race

package servetest

// raceEnabled: the tests are built with -race, and so is the daemon they
// start (Ralph).
const raceEnabled = true
