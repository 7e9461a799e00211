package analyze

import (
	"regexp"
	"strings"
)

// blockParser finds status blocks in the agent's words, one line at a time,
// so a long plain-text output never has to be held whole. The last complete
// block wins; a block still open when its message ends is ignored.
type blockParser struct {
	lines   int    // lines read inside the open block
	open    string // dialect of the delimited block being read, or ""
	indent  bool   // reading a "RALPH_STATUS:" header block (indented lines)
	fields  map[string]string
	lastKey string
	last    *StatusBlock
	notes   warnSet
}

var (
	ralphOpen    = "---RALPH_STATUS---"
	ralphClose   = "---END_RALPH_STATUS---"
	clarityOpen  = "---CLARITY_STATUS---"
	clarityClose = "---END_CLARITY_STATUS---"
	promiseRE    = regexp.MustCompile(`^<promise>\s*([A-Za-z][A-Za-z _-]*?)\s*</promise>$`)
)

// mayBeMarker is a necessary condition for markerLine(l) to be a marker
// that opens a block or a promise: it starts with '-', 'R', 'C' or '<'
// once the ASCII spaces, backticks, asterisks and underscores before it are
// skipped (a line that starts otherwise with a byte >= 0x80 may start with
// a Unicode space, and is left to markerLine).
func mayBeMarker(l string) bool {
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', '`', '*', '_':
			continue
		case '-', 'R', 'C', '<':
			return true
		}
		return l[i] >= 0x80
	}
	return false
}

// markerLine strips what Markdown wraps around a marker line.
func markerLine(l string) string {
	l = strings.TrimSpace(l)
	l = strings.Trim(l, "`*_")
	return strings.TrimSpace(l)
}

func (p *blockParser) line(l string) {
	if !p.indent && p.open == "" && !mayBeMarker(l) {
		return // outside a block only a marker line matters
	}
	m := markerLine(l)
	if p.indent {
		if p.lines++; startsIndented(l) && p.lines <= maxBlockLines {
			if k, v, ok := parseKV(l); ok {
				p.set(k, v)
				return
			}
			if p.lastKey != "" && strings.TrimSpace(l) != "" {
				p.appendValue(strings.TrimSpace(l))
				return
			}
		}
		p.finish(DialectRalph)
		// fall through: this line may itself open something
	}
	switch m {
	case ralphOpen:
		p.start(DialectRalph)
		return
	case clarityOpen:
		p.start(DialectClarity)
		return
	case ralphClose, clarityClose, "---END---":
		if p.open != "" {
			p.finish(p.open)
		}
		return
	case "RALPH_STATUS:", "CLARITY_STATUS:":
		if p.open == "" {
			p.fields = map[string]string{}
			p.lastKey = ""
			p.lines = 0
			p.indent = true
			return
		}
	case "---STATUS---":
		if p.open == "" {
			p.notes.add("found a ---STATUS--- block, which is not a ralph dialect (use ---RALPH_STATUS--- … ---END_RALPH_STATUS---); ignored")
			return
		}
	}
	if p.open != "" {
		if p.lines++; p.lines > maxBlockLines {
			p.notes.add("a status block longer than 200 lines was ignored")
			p.open, p.fields, p.lastKey = "", nil, ""
			return
		}
		if k, v, ok := parseKV(l); ok {
			p.set(k, v)
		} else if t := strings.TrimSpace(l); t != "" && p.lastKey != "" && !strings.HasPrefix(t, "```") {
			p.appendValue(t)
		}
		return
	}
	if !strings.HasPrefix(m, "<promise>") {
		return
	}
	if sm := promiseRE.FindStringSubmatch(m); sm != nil {
		p.last = &StatusBlock{Dialect: DialectPromise, Fields: map[string]string{"PROMISE": strings.Clone(sm[1])}}
	}
}

// Bounds on what an open block may hold: an unterminated marker followed by
// megabytes of text must not be collected.
const (
	maxBlockLines = 200
	maxFieldLen   = 4 << 10
)

func (p *blockParser) start(dialect string) {
	if p.open != "" {
		p.notes.add("a status block was opened again before it was closed; the unfinished one is ignored")
	}
	p.open = dialect
	p.lines = 0
	p.fields = map[string]string{}
	p.lastKey = ""
}

func (p *blockParser) set(k, v string) {
	if len(v) > maxFieldLen {
		v = v[:maxFieldLen]
	}
	k, v = strings.Clone(k), strings.Clone(v) // l may be a view of a message's text (textView)
	p.fields[k] = v
	p.lastKey = k
}

func (p *blockParser) appendValue(t string) {
	if v := p.fields[p.lastKey]; len(v)+len(t) < maxFieldLen {
		p.fields[p.lastKey] = strings.TrimSpace(v + "\n" + t)
	}
}

func (p *blockParser) finish(dialect string) {
	if len(p.fields) > 0 {
		p.last = &StatusBlock{Dialect: dialect, Fields: p.fields}
	} else {
		p.notes.add("a status block without KEY: value lines was ignored")
	}
	p.open, p.indent, p.fields, p.lastKey = "", false, nil, ""
}

// endMessage closes what a message boundary closes: an indented header block
// ends with its message, a delimited block without its end marker is dropped.
func (p *blockParser) endMessage() {
	if p.indent {
		p.finish(DialectRalph)
	}
	if p.open != "" {
		p.notes.add("an unterminated ---" + p.open + "--- block was ignored")
		p.open, p.fields, p.lastKey = "", nil, ""
	}
}

func startsIndented(l string) bool {
	return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
}

// parseKV reads "KEY: value", tolerating Markdown bullets and bold around the
// key. Keys are stored upper case.
func parseKV(l string) (key, val string, ok bool) {
	t := strings.TrimSpace(l)
	t = strings.TrimPrefix(t, "- ")
	t = strings.TrimPrefix(t, "* ")
	t = strings.TrimLeft(t, "*_")
	i := strings.IndexByte(t, ':')
	if i <= 0 {
		return "", "", false
	}
	k := strings.TrimRight(t[:i], "*_ ")
	if !isKey(k) {
		return "", "", false
	}
	v := strings.TrimSpace(strings.TrimLeft(t[i+1:], "*_"))
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(v, "**"), "__"))
	return strings.ToUpper(k), v, true
}

func isKey(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i, c := range k {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case i > 0 && (c == '_' || (c >= '0' && c <= '9')):
		default:
			return false
		}
	}
	return true
}

// warnSet keeps warnings unique and in first-seen order.
type warnSet struct {
	list []string
	seen map[string]bool
}

func (w *warnSet) add(s string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[s] || len(w.list) >= 50 {
		return
	}
	w.seen[s] = true
	w.list = append(w.list, s)
}
