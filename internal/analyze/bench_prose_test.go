package analyze

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
)

// proseSentences are the kind of thing an agent says between tool calls. They
// use on purpose the words the cue patterns look for (error, failed, test,
// limit, usage, done, complete, should…) in the ordinary senses that are not
// cues, as real prose does.
var proseSentences = []string{
	"Let me read the handler first to see how errors are propagated to the caller.",
	"The error handling in `parseConfig` swallows the underlying cause, so I will wrap it with `fmt.Errorf(\"parse %s: %w\", path, err)`.",
	"I'll run the tests again to make sure nothing else broke.",
	"The test for the rate limiter failed because the clock was not injected; I am fixing that now.",
	"Now I understand the structure: the `Store` interface has three implementations and only the file one is used in production.",
	"This function is called from two places, and both of them ignore the returned error.",
	"Next, I need to update the usage text of the `--limit` flag so it mentions the default of 100.",
	"Good, the build passes; the remaining work is the documentation and one edge case in the retry logic.",
	"Looking at the failing case more closely, the fixture expects a trailing newline that the writer no longer emits.",
	"I should check whether `Close` is safe to call twice before relying on it in the deferred cleanup.",
	"The previous attempt timed out, so this time I'll limit the search to the `internal/` directory.",
	"That looks right: the exception path now logs the request id and returns a 502 instead of panicking.",
	"Let me check the git history of this file to see why the fallback was added in the first place.",
	"I found the cause of the flaky test: two goroutines write to the same map without a lock.",
	"Once this step is done, I'll move on to the second task in the plan.",
	"The migration script is only half complete; the down migration still needs to be written.",
	"I'm going to refactor `loadUsers` into smaller functions so each one can be tested on its own.",
	"There is a subtle issue here: `time.Now()` is called twice, so the two timestamps can differ by a few microseconds.",
	"The linter complains about an unused parameter in `handleWebhook`, which I will remove.",
	"According to the spec, a request over the quota must be rejected with 429 and a `Retry-After` header.",
	"I added a table-driven test with twelve cases, including empty input, a BOM and a line longer than the buffer.",
	"Which of the two approaches is simpler is not obvious, so I will start with the one that changes fewer files.",
	"The benchmark shows 40 allocations per call, most of them from converting the key to a string.",
	"Running `go vet` reports nothing, and `staticcheck` only flags a deprecated call in a test helper.",
	"I updated the README section on configuration to describe the new `MAX_RETRIES` key.",
	"Note that the fatal path in `main` exits before the deferred flush runs, which loses the last log lines.",
	"The usage limit of the upstream API is 600 requests per minute, well above what the worker sends.",
	"After the change, the handler returns early when the context is cancelled, which fixes the leak.",
	"Reading `fix_plan.md`, the next open item is adding pagination to the list endpoint.",
	"All the parser tests pass now, but the integration suite still needs the database container.",
}

// proseCode are Markdown pieces of longer messages.
var proseCode = []string{
	"```go\nfunc (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tif err := s.check(r); err != nil {\n\t\thttp.Error(w, err.Error(), http.StatusBadRequest)\n\t\treturn\n\t}\n}\n```",
	"| file | change |\n|---|---|\n| `server.go` | early return on cancel |\n| `server_test.go` | two new cases |",
	"```sh\ngo test ./internal/store -run TestLoad -count=1\n```",
	"> The retry budget is shared by all requests of one client.",
}

// proseMessage builds the r-th assistant message: mostly a few sentences,
// sometimes a long structured message with headings, lists and code.
func proseMessage(r *uint64) string {
	next := func(n int) int {
		*r = *r*6364136223846793005 + 1442695040888963407
		return int((*r >> 33) % uint64(n))
	}
	var b strings.Builder
	n := 1 + next(4)
	long := next(8) == 0
	if long {
		n = 15 + next(30)
		b.WriteString("## Summary of the changes so far\n\n")
	}
	for i := 0; i < n; i++ {
		if long && i > 0 && i%5 == 0 {
			switch next(3) {
			case 0:
				b.WriteString("\n\n" + proseCode[next(len(proseCode))] + "\n\n")
			case 1:
				fmt.Fprintf(&b, "\n\n### Step %d\n\n", i/5)
			default:
				b.WriteString("\n- ")
			}
		} else if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(proseSentences[next(len(proseSentences))])
	}
	return b.String()
}

// proseTranscript writes a transcript in which about a fifth of the bytes
// are assistant prose, the rest tool calls and their results.
func proseTranscript(w io.Writer, size int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n, prose int64
	emit := func(s string) {
		n += int64(len(s)) + 1
		bw.WriteString(s)
		bw.WriteByte('\n')
	}
	emit(sInit("bench-session"))
	// The tool results of transcript's, as they were.
	var r uint64 = 1
	for i := 0; n < size; i++ {
		id := fmt.Sprintf("msg_%d", i)
		if prose*5 < n {
			l := sText(id, proseMessage(&r))
			prose += int64(len(l)) + 1
			emit(l)
			continue
		}
		toolTurn(emit, id, i)
	}
	emit(sFinal("All tasks done."+block, `,"uuid":"final"`))
	return bw.Flush()
}

// The prose-heavy transcript has the share of prose it claims.
func TestProseTranscriptShare(t *testing.T) {
	var sb strings.Builder
	if err := proseTranscript(&sb, 2<<20); err != nil {
		t.Fatal(err)
	}
	var prose, total int
	for l := range strings.Lines(sb.String()) {
		total += len(l)
		if strings.HasPrefix(l, `{"type":"assistant"`) && strings.Contains(l, `"type":"text"`) {
			prose += len(l)
		}
	}
	if share := float64(prose) / float64(total); share < 0.18 || share > 0.22 {
		t.Fatalf("prose share %.2f, want about 0.2", share)
	}
}

// BenchmarkAnalyzeProseCPU times the analysis alone, without the heap
// sampler of benchTranscript (for profiles).
func BenchmarkAnalyzeProseCPU(b *testing.B) {
	var sb strings.Builder
	if err := proseTranscript(&sb, 10<<20); err != nil {
		b.Fatal(err)
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Analyze(strings.NewReader(in), Options{Now: testNow}); err != nil {
			b.Fatal(err)
		}
	}
}
