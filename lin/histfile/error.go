package histfile

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// Error is a malformed history file: where the problem is and what it is.
type Error struct {
	Name string // the file's name, as given to Parse
	Line int    // 1-based line; 0 when the problem is the whole file
	Col  int    // 1-based column in bytes; 0 when the problem is a whole line or entry
	Msg  string // what is wrong
}

// Error returns "NAME:LINE:COL: MSG", "NAME:LINE: MSG" when there is no
// column, or "NAME: MSG" when there is no line; always one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Name)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Col))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return oneLine.Replace(b.String())
}

// oneLine escapes line breaks, which a file name or a quoted piece of
// input could hold.
var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)

// errorf returns an *Error at line and col of name.
func errorf(name string, line, col int, format string, args ...any) *Error {
	return &Error{Name: name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// position returns the 1-based line and column of byte offset off in data.
// It counts the lines before off, so it is for errors, not for every
// operation (see lineCounter).
func position(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col = off - (bytes.LastIndexByte(data[:off], '\n') + 1) + 1
	return line, col
}

// lineCounter returns the line of increasing byte offsets in one pass.
type lineCounter struct {
	data []byte
	off  int // offset counted up to
	line int // line of off
}

func newLineCounter(data []byte) *lineCounter { return &lineCounter{data: data, line: 1} }

// lineAt returns the 1-based line of byte offset off, which must not be
// below the offset of the previous call.
func (c *lineCounter) lineAt(off int) int {
	if off > len(c.data) {
		off = len(c.data)
	}
	if off > c.off {
		c.line += bytes.Count(c.data[c.off:off], []byte{'\n'})
		c.off = off
	}
	return c.line
}

// source returns an operation's Source: "NAME:LINE".
func source(name string, line int) string { return name + ":" + strconv.Itoa(line) }

// validate runs h.Validate and turns its error into an *Error at the
// line of the operation at fault (whose Source is "NAME:LINE").
func validate(name string, h *lin.History) error {
	err := h.Validate()
	if err == nil {
		return nil
	}
	var ve *lin.ValidationError
	if errors.As(err, &ve) {
		if rest, ok := strings.CutPrefix(ve.Source, name+":"); ok {
			if line, err := strconv.Atoi(rest); err == nil && line > 0 {
				return &Error{Name: name, Line: line, Msg: ve.Msg}
			}
		}
	}
	return &Error{Name: name, Msg: err.Error()}
}
