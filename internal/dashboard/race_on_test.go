//go:build race

package dashboard

// raceEnabled: the daemon the browser drives is built with -race too, so
// a data race between the dashboard and the loops fails the test.
const raceEnabled = true
