//go:build !race

package servetest

const raceEnabled = false
