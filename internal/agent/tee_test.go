package agent

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// teeOver feeds data through a lineTee as a process would through its pipe.
func teeOver(t *testing.T, data []byte, onLine func([]byte)) (file []byte, warnings []string) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var out bytes.Buffer
	tee := newLineTee(pr, &out, onLine)
	tee.start()
	if _, err := pw.Write(data); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	warnings = tee.wait(5 * time.Second)
	return out.Bytes(), warnings
}

func TestLineTeeCutsLongLines(t *testing.T) {
	long := strings.Repeat("x", maxLiveLine+100)
	data := []byte(long + "\nnext\n")
	var lines []string
	file, warnings := teeOver(t, data, func(l []byte) { lines = append(lines, string(l)) })
	if !bytes.Equal(file, data) {
		t.Error("file does not hold the whole output")
	}
	if len(lines) != 2 || len(lines[0]) != maxLiveLine || lines[1] != "next" || len(warnings) != 0 {
		t.Errorf("got %d lines (first %d bytes), warnings %q", len(lines), len(lines[0]), warnings)
	}
}

// TestLineTeeDropsWhenBehind: a stalled consumer (a terminal paused with
// Ctrl-S) costs live lines, never output in the file or a stalled agent.
func TestLineTeeDropsWhenBehind(t *testing.T) {
	var data bytes.Buffer
	for range 3 * maxQueuedLine {
		data.WriteString("line\n")
	}
	release := make(chan struct{})
	n := 0
	onLine := func([]byte) {
		if n == 0 {
			<-release
		}
		n++
	}
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	file, warnings := teeOver(t, data.Bytes(), onLine)
	if !bytes.Equal(file, data.Bytes()) {
		t.Error("file does not hold the whole output")
	}
	if n >= 3*maxQueuedLine || n < maxQueuedLine {
		t.Errorf("delivered %d lines", n)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "skipped") {
		t.Errorf("warnings = %q", warnings)
	}
}
