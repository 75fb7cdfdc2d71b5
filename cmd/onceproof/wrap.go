package main

import (
	"strings"
	"unicode/utf8"
)

// The reports are read as text (a diff, a terminal, an editor) as often as
// rendered, so their prose is wrapped: a paragraph or a list item longer
// than the width is broken at spaces into lines that render exactly as the
// one long line did (CommonMark joins a paragraph's lines with a space, and
// a list item's continuation lines are indented under its text).

// proseWidth is the column the reports' prose and `onceproof list` (when
// it cannot learn the terminal's width) wrap at.
const proseWidth = 100

// maxLine is the longest line a generated .md may have, in characters
// (TestGeneratedMarkdownLinesAreShort): the table rows and unbreakable
// tokens (a link, a code span) may pass proseWidth, never this.
const maxLine = 300

// wrapMarkdown wraps the paragraphs and list items of md at width. It
// leaves alone what a break would change: headings, table rows, HTML
// lines, link reference definitions and fenced code, except a timeline's
// anomaly notes ("!! Prop: ...") in a ```text block, which are wrapped
// under their text (a reader's aid: no tool parses a timeline back).
func wrapMarkdown(md string, width int) string {
	lines := strings.Split(md, "\n")
	var out []string
	fence := ""
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(trimmed)]
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, "```") {
				fence = ""
			} else if fence == "```text" && strings.HasPrefix(trimmed, "!! ") {
				out = append(out, wrapWords(trimmed, width, indent, indent+"   ")...)
				continue
			}
			out = append(out, line)
		case strings.HasPrefix(trimmed, "```"):
			fence = trimmed
			out = append(out, line)
		case trimmed == "", strings.HasPrefix(trimmed, "#"), strings.HasPrefix(trimmed, "|"),
			strings.HasPrefix(trimmed, "<"), isRefDef(trimmed):
			out = append(out, line)
		case strings.HasPrefix(trimmed, "- "):
			out = append(out, wrapWords(trimmed, width, indent, indent+"  ")...)
		default:
			out = append(out, wrapWords(trimmed, width, indent, indent)...)
		}
	}
	return strings.Join(out, "\n")
}

// isRefDef reports whether a line is a link reference definition
// ("[label]: target").
func isRefDef(s string) bool {
	label, _, ok := strings.Cut(s, "]: ")
	return ok && strings.HasPrefix(label, "[") && !strings.ContainsAny(label[1:], "[] ")
}

// wrapWords breaks text at spaces into lines of at most width characters
// (a token longer than the width goes on the line before it), the first line
// prefixed by first and the rest by rest. A code span is one token (a
// break inside it would be read as part of the command it quotes), and
// a word that would start a line as block syntax ("- ", "#", "|", "1.",
// ">") stays on the line before it, so a break never makes a list item,
// heading or table row out of prose.
func wrapWords(text string, width int, first, rest string) []string {
	var lines []string
	line := first
	empty := true
	for _, tok := range tokens(text) {
		switch {
		case empty:
			line += tok
			empty = false
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(tok) <= width || startsBlock(tok),
			// A token too long for any line stays where it is: a break
			// before it would only leave a short line behind.
			utf8.RuneCountInString(rest+tok) > width:
			line += " " + tok
		default:
			lines = append(lines, line)
			line = rest + tok
		}
	}
	return append(lines, line)
}

// tokens splits text at single spaces, keeping each `code span` and each
// [link text](target) whole.
func tokens(text string) []string {
	var out []string
	inCode, depth := false, 0
	for _, w := range strings.Split(text, " ") {
		if inCode || depth > 0 {
			out[len(out)-1] += " " + w
		} else {
			out = append(out, w)
		}
		if strings.Count(w, "`")%2 == 1 {
			inCode = !inCode
		}
		if !inCode {
			depth = max(0, depth+strings.Count(w, "[")-strings.Count(w, "]"))
		}
	}
	return out
}

// startsBlock reports whether a line starting with word would be read as
// block syntax rather than a paragraph's continuation: a list marker, a
// heading, a thematic break or setext underline, a quote, a table row, an
// HTML block or a fence.
func startsBlock(word string) bool {
	if word == "" {
		return true // an empty token is a doubled space: keep it in place
	}
	if strings.Trim(word, "-") == "" || strings.Trim(word, "=") == "" || strings.Trim(word, "#") == "" ||
		word == "+" || word == "*" {
		return true
	}
	for _, p := range []string{">", "|", "<", "```", "~~~"} {
		if strings.HasPrefix(word, p) {
			return true
		}
	}
	digits := strings.TrimLeft(word, "0123456789")
	return len(digits) < len(word) && (digits == "." || digits == ")")
}
