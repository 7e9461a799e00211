package wire

import "testing"

func TestUnwrapShell(t *testing.T) {
	tests := []struct{ in, want string }{
		{`/bin/bash -lc 'go test ./...'`, "go test ./..."},
		{`bash -lc "printf 'hello\n' > hello.txt"`, `printf 'hello\n' > hello.txt`},
		{`/usr/bin/zsh -c 'ls -la'`, "ls -la"},
		{`sh -lc 'echo '"'"'x'"'"''`, "echo 'x'"},
		{`python3 -c 'print(1)'`, `python3 -c 'print(1)'`}, // not a shell wrapper
		{`bash -lc 'a' extra`, `bash -lc 'a' extra`},
		{`bash -lc 'unterminated`, `bash -lc 'unterminated`},
	}
	for _, tt := range tests {
		if got := unwrapShell(tt.in); got != tt.want {
			t.Errorf("unwrapShell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
