package histfile

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/mgtrace/mgtrace/lin"
)

// WriteEDN writes h as a Jepsen EDN history, one map per line: each
// operation's :invoke, and its completion (:ok for an ok operation, with
// the output as :value; :info, with the input, for an info one; none for
// a pending one), in the order of their positions, invocations first
// where positions tie. EDN has no positions, so :info completions go
// last, and a history read back numbers its events from 0; the real-time
// order of the operations stays the same. An unknown operation (completed
// with an unknown output) cannot be written: WriteEDN returns an error.
func WriteEDN(w io.Writer, h *lin.History) error {
	type event struct {
		pos      int64
		complete bool
		op       int
	}
	events := make([]event, 0, 2*len(h.Ops))
	for i := range h.Ops {
		o := &h.Ops[i]
		if o.Status == lin.Unknown {
			return fmt.Errorf("operation %d (%s) has an unknown output, which Jepsen's EDN cannot express", i, o.Describe())
		}
		events = append(events, event{pos: o.Call, op: i})
		switch o.Status {
		case lin.OK:
			events = append(events, event{pos: o.Return, complete: true, op: i})
		case lin.Info:
			events = append(events, event{pos: lin.Never, complete: true, op: i})
		}
	}
	sort.Slice(events, func(i, j int) bool {
		a, b := events[i], events[j]
		if a.pos != b.pos {
			return a.pos < b.pos
		}
		if a.complete != b.complete {
			return !a.complete
		}
		return a.op < b.op
	})
	bw := bufio.NewWriter(w)
	var b []byte
	for _, e := range events {
		o := &h.Ops[e.op]
		typ, value := ":invoke", o.Input
		if e.complete {
			typ = ":ok"
			if o.Status == lin.OK {
				value = o.Output
			} else {
				typ = ":info"
			}
		}
		b = append(b[:0], "{:process "...)
		b = strconv.AppendInt(b, int64(o.Client), 10)
		b = append(b, ", :type "...)
		b = append(b, typ...)
		b = append(b, ", :f "...)
		if isKeywordName(o.Name) {
			b = append(b, ':')
			b = append(b, o.Name...)
		} else {
			b = appendEDNString(b, o.Name)
		}
		if !o.Key.IsNil() {
			b = append(b, ", :key "...)
			b = appendEDNValue(b, o.Key)
		}
		b = append(b, ", :value "...)
		b = appendEDNValue(b, value)
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendEDNValue appends v in EDN: a string that looks like a keyword
// (":timed-out") as the keyword, which reads back as the same string.
func appendEDNValue(b []byte, v lin.Value) []byte {
	switch v.Kind {
	case lin.Int:
		return strconv.AppendInt(b, v.I, 10)
	case lin.Bool:
		return strconv.AppendBool(b, v.I != 0)
	case lin.String:
		if len(v.S) > 1 && v.S[0] == ':' && isKeywordName(v.S[1:]) {
			return append(b, v.S...)
		}
		return appendEDNString(b, v.S)
	case lin.List:
		b = append(b, '[')
		for i, e := range v.L {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendEDNValue(b, e)
		}
		return append(b, ']')
	}
	return append(b, "nil"...)
}

// appendEDNString appends s as an EDN string literal.
func appendEDNString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c < 0x20 || c == 0x7f:
			b = fmt.Appendf(b, `\u%04x`, c)
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				r = utf8.RuneError // invalid UTF-8 cannot be written; write U+FFFD
			}
			b = utf8.AppendRune(b, r)
			i += n
			continue
		}
		i++
	}
	return append(b, '"')
}

// isKeywordName reports whether s can follow a colon as a keyword that
// Clojure's reader and histfile's read back as s: a letter, then letters,
// digits and -_.?!*+<>=/.
func isKeywordName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' && c != '?' && c != '!' && c != '*' && c != '+' && c != '<' && c != '>' && c != '=' && c != '/' {
			return false
		}
	}
	return true
}
