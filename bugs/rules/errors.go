package rules

import (
	"sort"
	"strings"
)

// maxErrors is how many errors Parse and Check report before they add a
// final "too many errors" and stop.
const maxErrors = 50

// msgTooMany is the message of the error that ends a list cut at
// maxErrors.
const msgTooMany = "too many errors"

// Error is one problem in a rules file, at a position.
type Error struct {
	Pos Pos
	Msg string
}

// Error formats the error as FILE:LINE:COL: message (LINE:COL: message
// when the file has no name).
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errors is every error found in a rules file, sorted by position. When
// it was cut at 50 errors its last element says "too many errors".
type Errors []*Error

// Error formats the list one error per line.
func (l Errors) Error() string {
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
	list    Errors
	seen    map[Error]bool
	tooMany *Error
}

// add records an error; it reports false once the list is full.
func (s *errorSink) add(p Pos, msg string) bool {
	if s.tooMany != nil {
		return false
	}
	e := Error{Pos: p, Msg: msg}
	if s.seen[e] {
		return true
	}
	if len(s.list) >= maxErrors {
		s.tooMany = &Error{Pos: p, Msg: msgTooMany}
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
	l := append(Errors(nil), s.list...)
	sort.SliceStable(l, func(i, j int) bool { return before(l[i].Pos, l[j].Pos) })
	if s.tooMany != nil {
		l = append(l, s.tooMany)
	}
	return l
}

// before reports whether a comes before b in the file.
func before(a, b Pos) bool {
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}
