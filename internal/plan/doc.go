// Package plan reads a task file such as .ralph/fix_plan.md and tells the loop
// how much of it is done, what comes next and whether it is complete.
//
// Parse is pure: bytes in, Plan out, no clock and no file system, so the stop
// decision that depends on it can be tested from a string. Load is the only
// function that touches the disk.
//
// # What counts as a task
//
// A task is a Markdown list item whose content starts with a checkbox:
//
//	open:  - [ ] text    * [ ] text    + [ ] text    1. [ ] text    2) [ ] text
//	done:  - [x] text    - [X] text    * [x] text    3. [x] text
//
// followed by at least one space or tab and some text. Indented (nested) items
// count; Task.Depth says how many list items enclose one. The rules follow
// GitHub's task lists, because that is what a person reading the plan sees;
// the few places they depart from it are said below.
//
// Not tasks:
//
//	"- [2026-01-29] note"   a bracket is not a box, nor is [v1.0] or [WIP]
//	"- [  ] x", "- [] x"    a box holds exactly one space, x or X
//	"-[ ] x"                no blank after the bullet
//	"- [x]done"             no blank after the box
//	"- [ ]"                 no text
//	"see - [ ] here"        a box in the middle of a sentence
//	"> - [ ] x"             in a block quote (GitHub draws a box here, but a
//	                        quote is copied material such as an issue, not the plan)
//
// nor lines inside fenced code blocks (``` or ~~~, at any indentation, closed
// by a fence of the same character at least as long) or inside HTML comments
// that start a line ("<!--" up to the line holding "-->"). Near misses among
// these are reported in Plan.Warnings so a typo does not silently drop a
// task. Numbered items count because GitHub renders them as boxes and agents
// like to number steps.
//
// Indented code blocks (four spaces after a blank line) are deliberately not
// recognised: plans often indent nested tasks by four spaces with blank lines
// between them, and hiding those would let the loop stop with work left.
//
// An unclosed fence or comment runs to the end of the file, as in CommonMark,
// so the boxes after it are not counted; a warning names the line where it
// opened and how many boxes it hid.
//
// Only the first line of a task is its text; continuation lines are ignored.
// Inline HTML comments are removed from the text.
//
// # Sections
//
// ATX headings ("## Title", up to three spaces of indentation, optional
// closing #s) and setext headings (a paragraph underlined with === or ---)
// open sections. A heading's title is normalised before it is compared with
// section names: inline markup (* _ ` ~) is dropped, leading characters that
// are not letters (emoji, numbering, punctuation) and trailing ones that are
// not letters, digits or closing brackets (colons, emoji) are trimmed,
// whitespace is collapsed and case is ignored. A title matches a name when it
// equals the name or starts with it followed by a space, colon or opening
// parenthesis. So "## 🎁 Nice to Have:", "### Optional Features" and
// "## Future (v2)" match, while "## Futures", "## Future-proofing" and
// "## Phase 3 (optional)" do not.
//
// Tasks under a heading matching an optional section name
// (DefaultOptionalSections unless Options say otherwise) are optional: they
// never block completion. Sub-headings inherit this until the next heading of
// the same or a higher level, so a "###" below "## Future" is optional too.
//
// A completed section ("## Completed", "## Done") is expected to hold checked
// boxes only. An unchecked box there still counts as open — moving a task to
// the Completed section does not finish it — and is reported in Warnings.
// Completed sections only produce warnings; they never change a count, so a
// heading that matches by accident ("## Done when tests pass") is harmless.
//
// # Completion
//
// A plan is complete when it has at least one task and every required task
// is checked. An empty plan (no file content, or no boxes at all) is not
// complete, so the loop does not stop just because the agent emptied or
// mangled the file; a plan whose only tasks are optional is complete.
//
// # Progress between iterations
//
// Diff compares the plan before and after an agent call. Agents reorder,
// move and reword lines, so tasks are paired by their text reduced to
// lower-case letters and digits (markup, emoji and punctuation dropped), in
// file order for duplicates, and then by whole-word prefix ("Add tests" and
// "Add tests (done in 3f2a1c)" are one task). Change.Progress is true when
// the plan gained checked items: a paired task got checked, or a new task
// arrived already checked (a finished task moved and reworded).
package plan
