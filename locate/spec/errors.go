package spec

import (
	"fmt"
	"sort"
	"strings"
)

// maxErrors is how many errors Parse and Check report before they add a
// final "too many errors" and stop.
const maxErrors = 50

// msgTooMany is the message of the error that ends a list cut at
// maxErrors.
const msgTooMany = "too many errors"

// Error is one problem in a spec file, at a position.
type Error struct {
	File string
	Pos  Pos
	Msg  string
}

// Error formats the error as FILE:LINE:COL: message.
func (e *Error) Error() string {
	if e.File == "" {
		return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// ErrorList is every error found in a spec, sorted by position. When it
// was cut at 50 errors its last element says "too many errors".
type ErrorList []*Error

// Error formats the list one error per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// errorSink collects errors without duplicates, up to maxErrors.
type errorSink struct {
	file    string
	list    ErrorList
	seen    map[Error]bool
	tooMany *Error
}

// add records an error; it reports false once the list is full.
func (s *errorSink) add(p Pos, msg string) bool {
	if s.tooMany != nil {
		return false
	}
	e := Error{File: s.file, Pos: p, Msg: msg}
	if s.seen[e] {
		return true
	}
	if len(s.list) >= maxErrors {
		s.tooMany = &Error{File: s.file, Pos: p, Msg: msgTooMany}
		return false
	}
	if s.seen == nil {
		s.seen = make(map[Error]bool)
	}
	s.seen[e] = true
	s.list = append(s.list, &e)
	return true
}

// full reports whether the list reached maxErrors.
func (s *errorSink) full() bool { return s.tooMany != nil }

// err returns the sorted list, or nil when it is empty.
func (s *errorSink) err() error {
	if len(s.list) == 0 {
		return nil
	}
	l := append(ErrorList(nil), s.list...)
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	if s.tooMany != nil {
		l = append(l, s.tooMany)
	}
	return l
}
