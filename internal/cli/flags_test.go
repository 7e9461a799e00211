package cli

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"ralph/internal/config"
	"ralph/internal/shellwords"
)

// flagCase is one command line and what ralph makes of it: the options the
// command's run function gets, or a refusal with an exit code.
type flagCase[O any] struct {
	argv string // split as a shell would
	want *O     // IO and functions are left out of the comparison
	code int    // with want nil: the exit code of the refusal
	says string // with want nil: in stderr
}

// checkFlags runs each case through ralph's command tree, with the command
// at path rebuilt by build around a run function that records its options,
// and maps the error to an exit code as Main does.
func checkFlags[O any](t *testing.T, path string, build func(IO, func(context.Context, *O) error) *cobra.Command, cases []flagCase[O]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.argv, func(t *testing.T) {
			argv, err := shellwords.Split(c.argv)
			if err != nil {
				t.Fatal(err)
			}
			var got *O
			var stderr bytes.Buffer
			ios := IO{In: strings.NewReader(""), Out: io.Discard, Err: &stderr}
			root := NewRoot(ios)
			old, _, err := root.Find(strings.Fields(path))
			if err != nil || old.CommandPath() != "ralph "+path {
				t.Fatalf("no command %q in the tree: %v", path, err)
			}
			parent := old.Parent()
			parent.RemoveCommand(old)
			cmd := build(ios, func(_ context.Context, o *O) error { got = o; return nil })
			parent.AddCommand(cmd)
			usageArgs(cmd) // as NewRoot did to the command it replaces
			root.SetArgs(argv)
			ran, err := root.ExecuteC()
			code := exitCode(ran, err, &stderr)

			if c.want == nil {
				if got != nil || code != c.code || !strings.Contains(stderr.String(), c.says) {
					t.Errorf("ran %v, exit %d, stderr %q; want a refusal with exit %d saying %q", got != nil, code, stderr.String(), c.code, c.says)
				}
				return
			}
			if code != 0 || got == nil {
				t.Fatalf("exit %d, stderr %q", code, stderr.String())
			}
			if g := flagsOnly(got); !reflect.DeepEqual(g, c.want) {
				t.Errorf("options\n got %+v\nwant %+v", g, c.want)
			}
		})
	}
}

// flagsOnly is a copy of the options without what flags do not set: the
// streams and injected functions.
func flagsOnly[O any](o *O) *O {
	c := *o
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.CanSet() && (f.Kind() == reflect.Func || f.Type() == reflect.TypeFor[IO]()) {
			f.SetZero()
		}
	}
	return &c
}

// flagLayer is the configuration layer of flags given as key, flag, value
// triples.
func flagLayer(kfv ...string) config.Layer {
	l := config.Layer{}
	for i := 0; i+3 <= len(kfv); i += 3 {
		l.SetFlag(kfv[i], kfv[i+1], kfv[i+2])
	}
	return l
}

// flagSuites are the flag tests, one per command of the tree.
var flagSuites = map[string]func(*testing.T, string){
	"run":            runFlagTest,
	"setup":          setupFlagTest,
	"enable":         enableFlagTest,
	"import":         importFlagTest,
	"migrate":        migrateFlagTest,
	"doctor":         doctorFlagTest,
	"status":         statusFlagTest,
	"logs":           logsFlagTest,
	"stats":          statsFlagTest,
	"replay":         replayFlagTest,
	"circuit status": circuitStatusFlagTest,
	"circuit reset":  circuitResetFlagTest,
	"session reset":  sessionResetFlagTest,
	"pause":          pauseFlagTest,
	"resume":         resumeFlagTest,
	"stop":           stopFlagTest,
	"monitor":        monitorFlagTest,
	"analyze":        analyzeFlagTest,
	"version":        versionFlagTest,
	"trust":          trustFlagTest,
	"demo":           demoFlagTest,
	demoAgentCmd:     demoAgentFlagTest,
	"serve":          serveFlagTest,
	"worker":         workerFlagTest,
	"mcp-bridge":     mcpBridgeFlagTest,
}

func init() {
	for path, cases := range taskFlagCases {
		flagSuites[path] = taskFlagTest(cases)
	}
}

func TestFlags(t *testing.T) {
	for path, test := range flagSuites {
		t.Run(path, func(t *testing.T) { test(t, path) })
	}
}

// Every command that does something has a flag test.
func TestEveryCommandHasAFlagTest(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "ralph"), " ")
		if c.Runnable() && path != "" && path != "help" {
			if _, ok := flagSuites[path]; !ok {
				t.Errorf("ralph %s has no flag test", path)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(IO{}))
}
