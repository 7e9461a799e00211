package termsafe

import (
	"bytes"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "I'll edit main.go.\n\tdone", "I'll edit main.go.\n\tdone"},
		{"unicode kept", "⚡ Edit größe.go — ok", "⚡ Edit größe.go — ok"},
		{"OSC title with BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"OSC 52 clipboard with ST", "x\x1b]52;c;Y3VybCBldmlsLnNo\x1b\\y", "xy"},
		{"CSI colour and clear", "\x1b[31mred\x1b[0m \x1b[2J\x1b[H", "red "},
		{"CSI private mode", "\x1b[?1049hscreen", "screen"},
		{"C1 CSI", "a\u009b31mb", "ab"},
		{"C1 OSC", "a\u009d0;t\u009cb", "ab"},
		{"unterminated OSC dropped", "ok\x1b]52;c;AAAA", "ok"},
		{"carriage return and bell", "safe\r\x07overwrite", "safeoverwrite"},
		{"backspace", "rm -rf /\b\b\b\bls", "rm -rf /ls"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"two-char escape", "a\x1bcb", "ab"},
		{"invalid utf-8", "a\xffb", "a\ufffdb"},
		{"lone ESC at end", "a\x1b", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Fatalf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"\x1b]0;t\x07", "\x1b[1;2m", "\u009b1m", "a\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		for _, c := range []byte(out) {
			if c == 0x1b || c == 0x07 || c == '\r' {
				t.Fatalf("control byte %#x left in %q", c, out)
			}
		}
		if String(out) != out {
			t.Fatalf("not idempotent: %q", out)
		}
	})
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	n, err := Writer{&b}.Write([]byte("t\x1b]0;x\x07ext\n"))
	if err != nil || n != 11 || b.String() != "text\n" {
		t.Fatalf("n %d err %v out %q", n, err, b.String())
	}
}
