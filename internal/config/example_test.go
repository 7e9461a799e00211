package config_test

import (
	"fmt"

	"ralph/internal/config"
)

// How the CLI puts the layers together. The real code passes os.LookupEnv and
// os.Getenv, and calls SetFlag only for flags whose Changed is true.
func Example() {
	rcText := []byte(`
# project settings
MAX_CALLS_PER_HOUR=50
ALLOWED_TOOLS="Read,Write,Bash(git log:*)"
CB_AUTO_RESET=true
MAX_CALL_PER_HOUR=10
`)
	env := map[string]string{"CB_AUTO_RESET": "false", "RALPH_DELAY": "2s"}

	rc, warns, err := config.ParseRalphrc(".ralphrc", rcText)
	if err != nil {
		panic(err)
	}
	flags := config.Layer{}
	flags.SetFlag("MAX_CALLS_PER_HOUR", "--calls", "20") // the user passed --calls 20

	cfg, more, err := config.Resolve(config.Defaults(), rc, config.FromEnv(func(k string) string { return env[k] }), flags)
	if err != nil {
		panic(err)
	}
	for _, w := range append(warns, more...) {
		fmt.Println("warning:", w)
	}
	fmt.Println(cfg.MaxCallsPerHour, cfg.Sources["MAX_CALLS_PER_HOUR"])
	fmt.Println(cfg.AllowedTools, cfg.Sources["ALLOWED_TOOLS"])
	fmt.Println(cfg.Breaker.AutoReset, cfg.Sources["CB_AUTO_RESET"])
	fmt.Println(cfg.Delay, cfg.Sources["DELAY"])
	argv, _ := cfg.AgentArgv()
	fmt.Println(argv)
	// Output:
	// warning: .ralphrc:6: unknown key MAX_CALL_PER_HOUR (ignored); did you mean MAX_CALLS_PER_HOUR?
	// 20 flag --calls
	// [Read Write Bash(git log:*)] .ralphrc:4
	// false env CB_AUTO_RESET
	// 2s env RALPH_DELAY
	// [claude]
}
