package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"ralph/internal/github"
	"ralph/internal/importer"
	"ralph/internal/reason"
	"ralph/internal/scaffold"
)

// The exit-code table: what each kind of error exits with and says.
func TestClassify(t *testing.T) {
	plain := &cobra.Command{Use: "status"}
	setup := exitTable(&cobra.Command{Use: "setup"}, lifecycleTable)
	imp := exitTable(&cobra.Command{Use: "import"}, importTable)
	tests := []struct {
		name      string
		cmd       *cobra.Command
		err       error
		code      int
		msg, hint string
	}{
		{"general", plain, errors.New("boom"), 1, "boom", ""},
		{"no command", nil, errors.New("boom"), 1, "boom", ""},
		{"usage", plain, usageError{errors.New("bad flag")}, 1, "bad flag", "Run 'ralph --help' for usage."},
		{"wrapped usage", plain, fmt.Errorf("x: %w", usageError{errors.New("bad")}), 1, "x: bad", "Run 'ralph --help' for usage."},
		{"exit code", plain, &ExitError{Code: 3, Err: errors.New("agent failed")}, 3, "agent failed", ""},
		{"silent exit code", plain, &ExitError{Code: 9}, 9, "", ""},
		{"silent", plain, errSilent, 1, "", ""},
		{"loop stopped", plain, stoppedError{reason.BreakerOpen}, 2, "", ""},
		{"usage limit", plain, stoppedError{reason.UsageLimit}, 4, "", ""},
		{"budget", plain, stoppedError{reason.MaxCost}, 5, "", ""},
		{"interrupted loop", plain, stoppedError{reason.Interrupted}, 130, "", ""},
		{"lifecycle usage", setup, usageError{errors.New("bad flag")}, 11, "bad flag", "Run 'ralph setup --help' for usage."},
		{"already done", setup, errAlreadyDone, 10, "", ""},
		{"bad input", setup, &scaffold.Error{Kind: scaffold.KindBadInput, Msg: "no"}, 11, "no", ""},
		{"not found", setup, &scaffold.Error{Kind: scaffold.KindNotFound, Msg: "no"}, 12, "no", ""},
		{"no git", setup, &scaffold.Error{Kind: scaffold.KindMissingDependency, Msg: "no"}, 13, "no", ""},
		{"refused", setup, &scaffold.Error{Kind: scaffold.KindRefused, Msg: "no"}, 14, "no", ""},
		{"lifecycle other", setup, errors.New("disk full"), 1, "disk full", ""},
		{"scaffold kinds only in their table", plain, &scaffold.Error{Kind: scaffold.KindRefused, Msg: "no"}, 1, "no", ""},
		{"incomplete import", imp, &importer.IncompleteError{}, 2, (&importer.IncompleteError{}).Error(), ""},
		{"no issue matched", imp, &importer.NoMatchError{}, 3, (&importer.NoMatchError{}).Error(), ""},
		{"rate limit", imp, &github.RateLimitError{}, 4, (&github.RateLimitError{}).Error(), ""},
		{"interrupted import", imp, fmt.Errorf("agent: %w", context.Canceled), 130, "interrupted", ""},
		{"import usage", imp, usageError{errors.New("bad")}, 1, "bad", "Run 'ralph --help' for usage."},
		{"import codes only in their table", setup, &github.RateLimitError{}, 1, (&github.RateLimitError{}).Error(), ""},
		{"cancelled elsewhere", plain, context.Canceled, 1, "context canceled", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg, hint := classify(tt.cmd, tt.err)
			if code != tt.code || msg != tt.msg || hint != tt.hint {
				t.Errorf("classify = %d, %q, %q; want %d, %q, %q", code, msg, hint, tt.code, tt.msg, tt.hint)
			}
		})
	}
	var out bytes.Buffer
	if code := exitCode(plain, usageError{errors.New("bad\x1b[31m")}, &out); code != 1 || out.String() != "ralph: bad\nRun 'ralph --help' for usage.\n" {
		t.Errorf("exitCode printed %q (exit %d)", out.String(), code)
	}
	if code := exitCode(plain, nil, &out); code != 0 {
		t.Errorf("no error: exit %d", code)
	}
}

// A finished loop's reason is its error: none when the work is done.
func TestLoopResult(t *testing.T) {
	for _, r := range reason.All {
		if code := exitCode(nil, loopResult(r), io.Discard); code != r.ExitCode() {
			t.Errorf("%s: exit %d, want %d", r, code, r.ExitCode())
		}
	}
}

// A wrong number of arguments is a usage error, as a wrong flag is, with
// the exit code of the command's table.
func TestArgumentErrorsAreUsageErrors(t *testing.T) {
	for argv, want := range map[string]struct {
		code int
		says string
	}{
		"status extra":        {1, "Run 'ralph --help' for usage."},
		"circuit reset extra": {1, "Run 'ralph --help' for usage."},
		"analyze a b":         {1, "Run 'ralph --help' for usage."},
		"setup":               {exitBadArgs, "Run 'ralph setup --help' for usage."},
		"migrate extra":       {exitBadArgs, "Run 'ralph migrate --help' for usage."},
	} {
		var stderr bytes.Buffer
		if code := Main(strings.Fields(argv), strings.NewReader(""), &stderr, &stderr); code != want.code || !strings.Contains(stderr.String(), want.says) {
			t.Errorf("ralph %s: exit %d, %q; want %d saying %q", argv, code, stderr.String(), want.code, want.says)
		}
	}
}
