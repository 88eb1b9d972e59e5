package tracehist

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// Pos is a position in an operations file: 1-based line and byte column.
// The zero Pos means none.
type Pos struct {
	Line, Col int
}

// IsValid reports whether p is a position (not the zero Pos).
func (p Pos) IsValid() bool { return p.Line > 0 }

// String returns "LINE:COL".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error is one problem of an operations file, at a position.
type Error struct {
	Name string // the file's name, as given to ParseOps
	Line int    // 1-based
	Col  int    // 1-based byte column
	Msg  string
}

// Error returns "NAME:LINE:COL: MSG".
func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg) }

// ErrorList is the problems of an operations file, in file order. As an
// error it is one line per problem.
type ErrorList []*Error

// Error joins the problems' lines with newlines.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems, for errors.As and errors.Is.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sortErrors orders errors by position (a stable sort: errors at one
// position keep their order).
func sortErrors(l ErrorList) {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Line != l[j].Line {
			return l[i].Line < l[j].Line
		}
		return l[i].Col < l[j].Col
	})
}

// OpsFile is a parsed operations file.
type OpsFile struct {
	// Name is the file's name, used in messages.
	Name string
	// Model is the model's name ("queue") and ModelPos where it is
	// written.
	Model    string
	ModelPos Pos
	// Init is the model's initial value (Nil without an init line: the
	// model's default); InitPos is the init line's value, zero when there
	// is none.
	Init    lin.Value
	InitPos Pos
	// Object is the object expression, nil when there is none: all the
	// operations are then on one object.
	Object Expr
	// Ops are the op lines in file order.
	Ops []*OpDef
}

// OpDef is one op line: `op NAME = FUNCTION CLAUSES...`.
type OpDef struct {
	Pos         Pos    // the op keyword
	Name        string // the model's operation
	NamePos     Pos
	Function    string // the C function (its symbol in the trace)
	FunctionPos Pos
	Clauses     []*Clause // in file order, each kind at most once
}

// Clause returns the op's clause of kind k, or nil.
func (o *OpDef) Clause(k ClauseKind) *Clause {
	for _, c := range o.Clauses {
		if c.Kind == k {
			return c
		}
	}
	return nil
}

// ClauseKind says what a clause gives.
type ClauseKind uint8

// The clauses of an op line.
const (
	ClauseIn    ClauseKind = iota + 1 // in EXPR[, EXPR...]: the input, at the call
	ClauseOut                         // out EXPR[, EXPR...]: the output, at the return
	ClauseKey                         // key EXPR: Op.Key, at the call
	ClauseEmpty                       // empty if COND: the output is nil, at the return
	ClauseFail                        // fail if COND: the operation is dropped, at the return
)

var clauseNames = [...]string{ClauseIn: "in", ClauseOut: "out", ClauseKey: "key", ClauseEmpty: "empty if", ClauseFail: "fail if"}

// String returns the clause's keywords: "in", "empty if".
func (k ClauseKind) String() string {
	if k >= ClauseIn && int(k) < len(clauseNames) {
		return clauseNames[k]
	}
	return fmt.Sprintf("clause(%d)", uint8(k))
}

// AtCall reports whether the clause is evaluated at the call (in, key);
// the others are evaluated at the return.
func (k ClauseKind) AtCall() bool { return k == ClauseIn || k == ClauseKey }

// Clause is one clause of an op line.
type Clause struct {
	Kind  ClauseKind
	Pos   Pos    // the clause's first keyword
	Exprs []Expr // one for key, empty if and fail if; one or more for in and out
}

// ReadOps reads and parses the operations file at path.
func ReadOps(path string) (*OpsFile, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read operations file: %w", err)
	}
	return ParseOps(path, src)
}

// ParseOps parses the operations file src; name is used in errors. A bad
// file gives an ErrorList: the first problem of each bad line, in file
// order, then the problems of the file as a whole (no model line, a
// second model line, a function mapped twice). The model's name and its
// operations' names are not checked here: see Check.
func ParseOps(name string, src []byte) (*OpsFile, error) {
	f := &OpsFile{Name: name}
	var errs ErrorList
	fail := func(p Pos, format string, args ...any) {
		errs = append(errs, &Error{Name: name, Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, args...)})
	}
	var modelPos, initPos, objectPos Pos
	functions := make(map[string]Pos)
	lines := strings.Split(string(src), "\n")
	for i, text := range lines {
		p := &parser{lx: lexer{src: text, line: i + 1}}
		st, err := p.statement()
		if err != nil {
			fail(err.pos, "%s", err.msg)
			continue
		}
		switch st := st.(type) {
		case nil: // blank or comment
		case *modelStmt:
			if modelPos.IsValid() {
				fail(st.pos, "a second model line (the first is at line %d)", modelPos.Line)
				continue
			}
			modelPos, f.Model, f.ModelPos = st.pos, st.name, st.namePos
		case *initStmt:
			if initPos.IsValid() {
				fail(st.pos, "a second init line (the first is at line %d)", initPos.Line)
				continue
			}
			initPos, f.Init, f.InitPos = st.pos, st.value, st.valuePos
		case *objectStmt:
			if objectPos.IsValid() {
				fail(st.pos, "a second object line (the first is at line %d)", objectPos.Line)
				continue
			}
			objectPos, f.Object = st.pos, st.expr
		case *OpDef:
			if first, ok := functions[st.Function]; ok {
				fail(st.FunctionPos, "function %s is already mapped at line %d (a function implements one operation)", st.Function, first.Line)
				continue
			}
			functions[st.Function] = st.FunctionPos
			f.Ops = append(f.Ops, st)
		}
	}
	if !modelPos.IsValid() {
		fail(Pos{1, 1}, "no model line (want `model NAME`, e.g. `model queue`)")
	}
	if len(f.Ops) == 0 && len(errs) == 0 {
		fail(Pos{1, 1}, "no op lines (want `op NAME = FUNCTION CLAUSES...`)")
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return f, nil
}

// Check asks knows whether the file's model exists (op "") and knows each
// op line's operation name, and reports each refusal at its position: a
// model it refuses at the model line (then the ops are not asked about),
// an operation at the op line's NAME. knows's error message becomes the
// problem's message. The result is nil or an ErrorList.
func (f *OpsFile) Check(knows func(model, op string) error) error {
	var errs ErrorList
	add := func(p Pos, err error) {
		errs = append(errs, &Error{Name: f.Name, Line: p.Line, Col: p.Col, Msg: err.Error()})
	}
	if err := knows(f.Model, ""); err != nil {
		add(f.ModelPos, err)
		return errs
	}
	for _, o := range f.Ops {
		if err := knows(f.Model, o.Name); err != nil {
			add(o.NamePos, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// errorAt makes an *Error of the file at p.
func (f *OpsFile) errorAt(p Pos, format string, args ...any) *Error {
	return &Error{Name: f.Name, Line: p.Line, Col: p.Col, Msg: fmt.Sprintf(format, args...)}
}

// AsErrorList returns err's problems when it is (or wraps) an ErrorList or
// an *Error, and nil otherwise.
func AsErrorList(err error) ErrorList {
	var l ErrorList
	if errors.As(err, &l) {
		return l
	}
	var e *Error
	if errors.As(err, &e) {
		return ErrorList{e}
	}
	return nil
}
