package analyze

import "testing"

func TestErrorLine(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{"Error: Failed to compile src/main.ts", true},
		{"ERROR: relation \"users\" does not exist", true},
		{"error: cannot find module 'x'", true},
		{"src/main.go:12:3: error: undefined: foo", true},
		{"error[E0308]: mismatched types", true},
		{"src/app.ts(4,1): error TS2304: Cannot find name 'x'.", true},
		{"Fatal: Segmentation fault in module X", true},
		{"fatal: not a git repository", true},
		{"Exception in thread \"main\" java.lang.NullPointerException", true},
		{"java.lang.IllegalStateException: closed", true},
		{"TypeError: x is not a function", true},
		{"[ERROR] Failed to execute goal org.apache.maven.plugins", true},
		{"2026-01-02T03:04:05Z [app]: error connecting to db", true},
		{"build failed with error code 2", true},
		{"panic: runtime error: index out of range", true},
		{"Traceback (most recent call last):", true},
		{"npm ERR! code ELIFECYCLE", true},
		{"--- FAIL: TestParse (0.00s)", true},
		{"FAIL\tralph/internal/plan\t0.01s", true},
		{"API Error: 529 Overloaded.", true},
		{"/abs/path/file.c:3:1: error: expected ';'", true},
		{"- Error: the build is red", true},
		// look-alikes
		{`{"is_error": false, "error_count": 0}`, false},
		{`"error": null,`, false},
		{"+export class ErrorHandler {", false},
		{"+  handleError(error: Error) {", false},
		{"-    if err != nil { return error: x }", false},
		{"# Error Handling Guide", false},
		{"When an error occurs, log it and retry.", false},
		{"Added error handling to the parser.", false},
		{"The error messages are now clearer.", false},
		{"Error: none", false},
		{"Errors: 0", false},
		{"Error count: 0", false},
		{"errors.New(\"boom\")", false},
		{"// error: this is a comment in code", false},
		{"> Error: quoted from the docs", false},
		{"| Error: | table cell |", false},
		{"", false},
	}
	for _, tc := range cases {
		if _, got := errorLine(tc.line); got != tc.want {
			t.Errorf("errorLine(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestTestsStatusOf(t *testing.T) {
	cases := []struct{ line, want string }{
		{"All tests pass.", TestsPassing},
		{"All 42 tests passed", TestsPassing},
		{"12 passed, 0 failed", TestsPassing},
		{"ok  \tralph/internal/plan\t0.012s", TestsPassing},
		{"3 tests failed", TestsFailing},
		{"Tests are failing on CI", TestsFailing},
		{"--- FAIL: TestX", TestsFailing},
		{"no tests failed", TestsPassing},
		{"Implemented the parser.", ""},
	}
	for _, tc := range cases {
		if got := testsStatusOf(tc.line); got != tc.want {
			t.Errorf("testsStatusOf(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestIsTestCommand(t *testing.T) {
	yes := []string{"npm test", "npm run test -- --watch=false", "yarn test", "pnpm test", "npx jest src", "pytest -q",
		"python -m pytest tests/", "go test ./...", "cargo test --all", "bats tests/", "mvn -q test", "./mvnw verify",
		"gradle test", "./gradlew check", "make test", "bundle exec rspec", "/bin/bash -lc 'go test ./...'", "cd app && npm test"}
	no := []string{"npm install", "go build ./...", "cargo build", "git status", "cat test.txt", "mvn package", "echo testing"}
	for _, c := range yes {
		if !isTestCommand(c) {
			t.Errorf("isTestCommand(%q) = false, want true", c)
		}
	}
	for _, c := range no {
		if isTestCommand(c) {
			t.Errorf("isTestCommand(%q) = true, want false", c)
		}
	}
}

func TestFoldLines(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"", 10, ""},
		{"one", 10, "one"},
		{"  one\r\n\n\ttwo  \n", 10, "one two"},
		{"one\ntwo\nthree", 8, "one two…"},
		{"ab\néé", 5, "ab é…"}, // not inside the second é
		{"ab é…", 5, "ab é…"},  // a clipped text clips to itself
	}
	for _, tt := range tests {
		got := foldLines(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("foldLines(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if clip(got, tt.max) != got {
			t.Errorf("clip(%q) is not itself", got)
		}
	}
}

func TestTestsValue(t *testing.T) {
	for v, want := range map[string]string{"FAILING": TestsFailing, "failed": TestsFailing, " Fail (2 of 40)": TestsFailing,
		"RED": TestsFailing, "PASSING": TestsPassing, "passed.": TestsPassing, "NOT_RUN": TestsNotRun, "not run": TestsNotRun,
		"": TestsUnknown, "unknown": TestsUnknown, "fine I think": TestsUnknown} {
		if got := TestsValue(v); got != want {
			t.Errorf("TestsValue(%q) = %s, want %s", v, got, want)
		}
	}
}
