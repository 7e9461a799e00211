package scaffold

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// The form in accessible mode reads one line per question, which is how a
// test can drive it. huh reads each field with its own buffered scanner,
// so the input is fed a byte at a time.
func TestAskEnable(t *testing.T) {
	dir := t.TempDir()
	prd := filepath.Join(dir, "prd.md")
	if err := os.WriteFile(prd, []byte("- a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stacks := []Stack{{ID: "go", Name: "Go", Dir: ".", Commands: Commands{Test: "go test ./..."}}}
	tests := []struct {
		name  string
		input string
		start EnableAnswers
		want  EnableAnswers
	}{
		{"defaults", "\n\n\n", EnableAnswers{ProjectName: "demo"},
			EnableAnswers{ProjectName: "demo", UseStack: true, Source: SourceNone}},
		{"prd, stack declined", "Other\nn\n2\n" + prd + "\n", EnableAnswers{ProjectName: "demo"},
			EnableAnswers{ProjectName: "Other", UseStack: false, Source: SourcePRD, File: prd}},
		{"a bad path is asked again", "\ny\n3\n" + filepath.Join(dir, "nope") + "\n" + prd + "\n", EnableAnswers{ProjectName: "demo"},
			EnableAnswers{ProjectName: "demo", UseStack: true, Source: SourceChecklist, File: prd}},
		{"source from a flag is not asked", "\n\n", EnableAnswers{ProjectName: "demo", Source: SourcePRD, File: prd},
			EnableAnswers{ProjectName: "demo", UseStack: true, Source: SourcePRD, File: prd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			a := tt.start
			in := iotest.OneByteReader(strings.NewReader(tt.input))
			if err := AskEnable(context.Background(), in, &out, true, stacks, &a); err != nil {
				t.Fatal(err)
			}
			if a != tt.want {
				t.Errorf("got %+v, want %+v\n%s", a, tt.want, out.String())
			}
			if !strings.Contains(out.String(), "go test ./...") {
				t.Errorf("the detected commands were not shown:\n%s", out.String())
			}
		})
	}
}
