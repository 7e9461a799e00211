package plan

import (
	"fmt"
	"strings"
)

// maxWarnings bounds Plan.Warnings: a generated or corrupted file could hold
// thousands of near misses, and a few are enough to show what is wrong.
const maxWarnings = 50

// Parse reads a plan. Any byte sequence is a valid Markdown document, so
// there is no error: the worst input yields a Plan with no tasks, which is
// not complete.
func (o Options) Parse(src []byte) Plan {
	optional, completed := o.OptionalSections, o.CompletedSections
	if optional == nil {
		optional = DefaultOptionalSections()
	}
	if completed == nil {
		completed = DefaultCompletedSections()
	}
	p := parser{optional: newSectionNames(optional), completed: newSectionNames(completed)}
	s := strings.TrimPrefix(string(src), "\uFEFF")
	for n := 1; ; n++ {
		line, rest, more := cutLine(s)
		p.line(n, line)
		if !more {
			break
		}
		s = rest
	}
	p.finish()
	return p.plan
}

// cutLine splits off the first line. \n, \r\n and a lone \r all end a line,
// as in CommonMark, so files saved on any platform give the same tasks.
func cutLine(s string) (line, rest string, more bool) {
	// IndexByte is vectorised; IndexAny over "\r\n" is several times slower,
	// and a \r can only end the line early, so look for it within the line.
	end := strings.IndexByte(s, '\n')
	line = s
	if end >= 0 {
		line = s[:end]
	}
	if i := strings.IndexByte(line, '\r'); i >= 0 {
		if i+1 < len(s) && s[i+1] == '\n' {
			return s[:i], s[i+2:], true
		}
		return s[:i], s[i+1:], true
	}
	if end < 0 {
		return s, "", false
	}
	return line, s[end+1:], true
}

type heading struct {
	level     int
	optional  bool
	completed bool
}

// parser is a line-at-a-time state machine. Markdown's block structure is
// context-dependent (a line of dashes is a heading underline after a
// paragraph and a rule elsewhere), so it keeps just the context needed.
type parser struct {
	optional, completed sectionNames
	plan                Plan
	dropped             int // warnings beyond maxWarnings

	headings []heading // open headings, outermost first
	section  string
	inOpt    bool // some open heading is optional
	inDone   bool // some open heading is a completed section

	// lists holds the content column of each open list item, outermost
	// first; its length is the depth of the next nested item.
	lists     []int
	prevBlank bool

	// para is the paragraph a setext underline would turn into a heading.
	// Lines continuing a list item (lazily or indented) are not eligible:
	// "- item\n---" is a list followed by a rule.
	paraOpen     bool
	paraEligible bool
	paraText     []string

	fence       byte // ` or ~ while inside a fenced block, else 0
	fenceLen    int
	fenceLine   int
	inComment   bool
	commentLine int
	hidden      int // boxes inside the open fence or comment
}

func (p *parser) line(n int, s string) {
	if p.inComment {
		if strings.Contains(s, "-->") {
			p.inComment = false
		} else if p.isTaskLine(s) {
			p.hidden++
		}
		return
	}
	col, body := indent(s)
	if p.fence != 0 {
		if fenceCloses(body, p.fence, p.fenceLen) {
			p.fence = 0
		} else if p.isTaskLine(s) {
			p.hidden++
		}
		return
	}
	if body == "" {
		p.closePara()
		p.prevBlank = true
		return
	}
	prevBlank := p.prevBlank
	p.prevBlank = false

	contentCol, rest, isItem := listItem(col, body)
	if prevBlank && !isItem {
		// After a blank line, a block indented less than an item's content
		// is no longer inside that item.
		p.popLists(col)
	}
	if strings.HasPrefix(body, "<!--") {
		// An HTML block: the whole line is raw HTML, even text after -->.
		p.closePara()
		if !strings.Contains(body, "-->") {
			p.inComment, p.commentLine, p.hidden = true, n, 0
		}
		return
	}
	if c, l, ok := fenceOpen(body); ok {
		p.closePara()
		p.fence, p.fenceLen, p.fenceLine, p.hidden = c, l, n, 0
		return
	}
	if col < 4 {
		if level, title, ok := atxHeading(body); ok {
			p.heading(level, title)
			return
		}
		if level, ok := setextUnderline(body); ok && p.paraOpen && p.paraEligible {
			p.heading(level, strings.Join(p.paraText, " "))
			return
		}
		if thematicBreak(body) {
			p.closePara()
			p.lists = p.lists[:0]
			return
		}
	}
	if isItem {
		p.item(n, col, contentCol, rest)
		return
	}
	if !p.paraOpen {
		p.paraOpen, p.paraEligible, p.paraText = true, len(p.lists) == 0, p.paraText[:0]
	}
	if p.paraEligible {
		p.paraText = append(p.paraText, strings.TrimSpace(body))
	}
	if msg := nearMiss(body); msg != "" {
		p.warn(n, msg)
	}
}

func (p *parser) item(n, col, contentCol int, rest string) {
	p.closePara()
	p.popLists(col)
	depth := len(p.lists)
	p.lists = append(p.lists, contentCol)

	done, text, res, problem := checkbox(rest)
	switch res {
	case noBox:
		return
	case badBox, emptyBox:
		p.warn(n, problem)
		return
	}
	p.plan.Tasks = append(p.plan.Tasks, Task{
		Line:     n,
		Text:     text,
		Done:     done,
		Optional: p.inOpt,
		Section:  p.section,
		Depth:    depth,
	})
	if p.inDone && !done {
		p.warn(n, fmt.Sprintf("unchecked task %q in a completed section still counts as open", text))
	}
}

// popLists closes every list item whose content starts right of col, i.e.
// that a block at col cannot belong to.
func (p *parser) popLists(col int) {
	for len(p.lists) > 0 && p.lists[len(p.lists)-1] > col {
		p.lists = p.lists[:len(p.lists)-1]
	}
}

func (p *parser) heading(level int, raw string) {
	p.closePara()
	p.lists = p.lists[:0]
	for len(p.headings) > 0 && p.headings[len(p.headings)-1].level >= level {
		p.headings = p.headings[:len(p.headings)-1]
	}
	p.section = cleanHeading(raw)
	key := normTitle(p.section)
	p.headings = append(p.headings, heading{
		level:     level,
		optional:  p.optional.match(key),
		completed: p.completed.match(key),
	})
	p.inOpt, p.inDone = false, false
	for _, h := range p.headings {
		p.inOpt = p.inOpt || h.optional
		p.inDone = p.inDone || h.completed
	}
}

func (p *parser) closePara() {
	p.paraOpen = false
}

// isTaskLine tells whether a hidden line would have been a task, so the
// warning about an unclosed fence or comment can say what it cost.
func (p *parser) isTaskLine(s string) bool {
	col, body := indent(s)
	if body == "" {
		return false
	}
	_, rest, ok := listItem(col, body)
	if !ok {
		return false
	}
	_, _, res, _ := checkbox(rest)
	return res == taskBox
}

// finish adds the warnings that only the end of the file can tell. They skip
// the cap: an unclosed fence hiding tasks matters more than any near miss.
func (p *parser) finish() {
	if p.dropped > 0 {
		p.plan.Warnings = append(p.plan.Warnings, Warning{Message: fmt.Sprintf("%d more warning(s) not shown", p.dropped)})
	}
	switch {
	case p.fence != 0:
		p.plan.Warnings = append(p.plan.Warnings, Warning{Line: p.fenceLine,
			Message: fmt.Sprintf("code fence is never closed; %d checkbox line(s) after it are not counted", p.hidden)})
	case p.inComment:
		p.plan.Warnings = append(p.plan.Warnings, Warning{Line: p.commentLine,
			Message: fmt.Sprintf("HTML comment is never closed; %d checkbox line(s) after it are not counted", p.hidden)})
	}
}

func (p *parser) warn(line int, msg string) {
	if len(p.plan.Warnings) >= maxWarnings {
		p.dropped++
		return
	}
	p.plan.Warnings = append(p.plan.Warnings, Warning{Line: line, Message: msg})
}
