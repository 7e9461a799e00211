package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The conformance cases of the `ralph analyze --json` contract: NAME.input is
// an agent output, NAME.json the command-line arguments and the expected
// fields (dotted paths; {"len": n}, {"min": n}, {"contains": s} matchers).
func TestConformance(t *testing.T) {
	specs, _ := filepath.Glob("testdata/conformance/*.json")
	if len(specs) == 0 {
		t.Fatal("no conformance cases found")
	}
	for _, spec := range specs {
		name := strings.TrimSuffix(filepath.Base(spec), ".json")
		t.Run(name, func(t *testing.T) {
			var c struct {
				Args   []string       `json:"args"`
				Expect map[string]any `json:"expect"`
			}
			raw, err := os.ReadFile(spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			opts := optionsFromArgs(t, c.Args)
			got := analyzeFileJSON(t, strings.TrimSuffix(spec, ".json")+".input", opts)
			for path, want := range c.Expect {
				if err := match(lookup(got, path), want); err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
		})
	}
}

func optionsFromArgs(t *testing.T, args []string) Options {
	t.Helper()
	opts := Options{ExitCode: -1, Now: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)}
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--exit-code":
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				t.Fatal(err)
			}
			opts.ExitCode = n
		case "--now":
			now, err := time.Parse(time.RFC3339, args[i+1])
			if err != nil {
				t.Fatal(err)
			}
			opts.Now = now
		case "--allowed-tools":
			opts.AllowedTools = SplitToolList(args[i+1])
		default:
			t.Fatalf("unknown argument %q", args[i])
		}
	}
	return opts
}

// analyzeFileJSON runs the analyzer and returns its JSON form decoded
// generically, as an outside check would see it.
func analyzeFileJSON(t *testing.T, path string, opts Options) map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := Analyze(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return toJSONMap(t, a)
}

func toJSONMap(t *testing.T, a *Analysis) map[string]any {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

type missing struct{}

func lookup(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return missing{}
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return missing{}
			}
			v = x[i]
		default:
			return missing{}
		}
	}
	return v
}

func match(got, want any) error {
	if m, ok := want.(map[string]any); ok && len(m) == 1 {
		for k, v := range m {
			switch k {
			case "len":
				l, ok := got.([]any)
				if !ok || float64(len(l)) != v.(float64) {
					return fmt.Errorf("want length %v, got %#v", v, got)
				}
				return nil
			case "min":
				switch g := got.(type) {
				case []any:
					if float64(len(g)) >= v.(float64) {
						return nil
					}
				case float64:
					if g >= v.(float64) {
						return nil
					}
				}
				return fmt.Errorf("want at least %v, got %#v", v, got)
			case "contains":
				if s, ok := got.(string); ok && strings.Contains(s, v.(string)) {
					return nil
				}
				return fmt.Errorf("want a string containing %q, got %#v", v, got)
			}
		}
	}
	if wf, ok := want.(float64); ok {
		if gf, ok := got.(float64); ok && math.Abs(gf-wf) < 1e-9 {
			return nil
		}
		return fmt.Errorf("want %v, got %#v", want, got)
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("want %#v, got %#v", want, got)
	}
	return nil
}
