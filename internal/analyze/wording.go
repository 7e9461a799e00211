package analyze

import (
	"regexp"
	"strings"
)

// Completion wording. A sentence counts when it says the whole work is done:
// strong phrases ("nothing left to do", "all tasks complete", "ready for
// review", "already implemented") count unless negated; the bare words
// complete/completed/done/finished count only when not negated, not used on
// a part of the work ("completed the first step", "done with this task") and
// not conditional or future ("once done", "will be complete").
var (
	strongCompletion = regexp.MustCompile(`\b(?:nothing (?:left |more |else |further )?(?:to do|to implement|remaining)|no (?:more |remaining |open )?tasks? (?:remaining|left|remain)|no remaining (?:tasks|work|items)|all (?:tasks|items|requirements|features|stories|user stories|work) (?:are |is |have been |has been )?(?:complete|completed|done|finished|implemented)|all (?:of the )?work (?:is )?(?:complete|completed|done|finished)|(?:already|fully) (?:been )?implemented|ready for (?:review|merge|release|deployment|production)|(?:project|implementation|work|everything|task list|plan) (?:is |has been |are )?(?:now )?(?:fully )?(?:complete|completed|done|finished)|all done|finished everything|completed everything)\b`)
	completionWord   = regexp.MustCompile(`\b(?:complete|completed|done|finished)\b`)
	negationBefore   = regexp.MustCompile(`\b(?:not|never|no|isn't|aren't|wasn't|weren't|hasn't|haven't|almost|nearly|partially|partly|mostly|half|barely|yet to be)\s+(?:\w+\s+){0,2}$`)
	partialMarker    = regexp.MustCompile(`\b(?:first|second|third|initial|step|steps|phase|part|parts|partial|stage|milestone|subtask|some|remain|remains|remaining|left|next|still|pending|todo|more|once|when|until|after|before|if|will|would|should|could|need|needs|must|to be|yet|incomplete|except)\b`)
	partialObject    = regexp.MustCompile(`^\s*(?:with |on |the |a |an |this |that |these |those |my |our |one |two |three |\d|task|step|phase|part|implementing|writing|adding|fixing)`)
	wholeObject      = regexp.MustCompile(`^\s*(?:with |on )?(?:all|everything|every|the (?:whole|entire) (?:project|plan|task list))\b`)
)

// hasCompletionWording reports whether the text claims the work is done.
func hasCompletionWording(text string) bool {
	for _, s := range sentences(text) {
		if sentenceClaimsCompletion(s) {
			return true
		}
	}
	return false
}

func sentenceClaimsCompletion(s string) bool {
	if len(s) > maxSentence { // a wall of text is not a claim; and keeps the checks linear
		return false
	}
	s = strings.ToLower(cleanProse(s))
	if locs := strongCompletion.FindAllStringIndex(s, -1); len(locs) > 0 {
		// The phrase itself may hold a marker ("nothing left to do"); the
		// rest of the sentence may not ("phase 1 implementation complete").
		var rest strings.Builder
		prev := 0
		for _, loc := range locs {
			rest.WriteString(s[prev:loc[0]])
			rest.WriteByte(' ')
			prev = loc[1]
		}
		rest.WriteString(s[prev:])
		if !partialMarker.MatchString(rest.String()) {
			for _, loc := range locs {
				if !negated(s, loc[0]) {
					return true
				}
			}
		}
	}
	if partialMarker.MatchString(s) {
		return false
	}
	for _, loc := range completionWord.FindAllStringIndex(s, -1) {
		if negated(s, loc[0]) {
			continue
		}
		rest := s[loc[1]:min(len(s), loc[1]+80)]
		if partialObject.MatchString(rest) && !wholeObject.MatchString(rest) {
			continue
		}
		return true
	}
	return false
}

const maxSentence = 2000

// negated looks at the few words before a match (bounded, so many matches
// in one sentence stay linear).
func negated(s string, at int) bool {
	return negationBefore.MatchString(s[max(0, at-60):at])
}

// cleanProse drops Markdown emphasis and code so wording checks see words.
func cleanProse(s string) string { return proseCleaner.Replace(s) }

var proseCleaner = strings.NewReplacer("**", "", "__", "", "`", "", "’", "'")

// sentences splits prose into sentences and lines.
func sentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if t := strings.TrimSpace(text[start:end]); t != "" {
			out = append(out, t)
		}
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n', ';':
			flush(i)
			start = i + 1
		case '.', '!', '?':
			// A dot inside a word (file.go, v1.2) does not end a sentence.
			if i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' && text[i+1] != '\t' && text[i+1] != '\r' {
				continue
			}
			flush(i + 1)
			start = i + 1
		}
	}
	flush(len(text))
	return out
}

// Questions addressed to a human: a sentence ending in "?" that speaks to
// the reader or asks for a decision, or an explicit request for input.
var (
	questionCue = regexp.MustCompile(`\b(?:you|your|should i|shall i|may i|can i|could i|do i|should we|shall we|do we|would it be|which|prefer|want me|is it ok|is that ok|okay to|proceed|confirm|clarify)\b|^(?:what|how|where|when|who)\b.*\bshould\b`)
	requestCue  = regexp.MustCompile(`^(?:please (?:confirm|clarify|advise|let me know|tell me|choose|decide)|let me know (?:which|whether|if|what|how)|i need (?:your|you to|clarification|guidance|input|a decision)|awaiting (?:your )?(?:input|decision|confirmation))\b`)
)

// questionList returns the questions the lines ask a human.
func questionList(lines []string) []string {
	var out []string
	inFence := false
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			continue
		}
		if inFence || strings.HasPrefix(t, ">") {
			continue
		}
		for _, s := range sentences(line) {
			l := strings.ToLower(cleanProse(strings.TrimLeft(s, "-*0123456789.) ")))
			if (strings.HasSuffix(l, "?") && questionCue.MatchString(l)) || requestCue.MatchString(l) {
				out = append(out, strings.TrimSpace(strings.TrimLeft(s, "-* ")))
				if len(out) >= 20 {
					return out
				}
			}
		}
	}
	return out
}
