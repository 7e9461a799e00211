// Command ralph runs an AI coding agent on a project in a loop and decides,
// after every call, whether to go on, wait, or stop.
package main

import (
	"os"

	"ralph/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
