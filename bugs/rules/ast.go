// Package rules reads bug rules: the bug-specification language of
// chapter 3 of Yan Wang, *Dynamic Analysis Techniques for Effective and
// Efficient Debugging*, PhD dissertation, UC Riverside, 2014. A rule is a
// triple of a detection point (the kind of step the program is about to
// take), a bug condition over the execution so far, and a list of values
// whose value propagation chains (VPCs) locate the root cause:
//
//	define Allocated(r) = exists event(_, malloc, _, bid) in Trace suchthat (bid == Bid(r))
//	define Freed(r, r1) = exists event(_, free, r1, bid) in Trace suchthat (bid == Bid(r))
//	[double_free] detect <Trace; free r>: Allocated(r) && Freed(r, r1) :VPC(r), VPC(r1)
//
// Parse turns a file into a *File and reports every syntax error it finds
// as FILE:LINE:COL: message; Check applies the static checks (names,
// arities, recursion, state parts, sets, event patterns, VPC variables).
// Format prints a file back in canonical syntax. The language is
// described in docs/bug-rules.md.
package rules

import "fmt"

// Pos is a position in a rules file: the file name, and the 1-based line
// and column (in bytes).
type Pos struct {
	File      string
	Line, Col int
}

// String formats the position as FILE:LINE:COL, or LINE:COL when the file
// has no name.
func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// File is one parsed rules file. Defines and rules may come in any order
// in the source; a rule may call a define written after it.
type File struct {
	Defines []*Define // auxiliary predicates, in file order
	Rules   []*Rule   // bug rules, in file order
}

// Define is an auxiliary predicate: `define Name(p1, p2) = formula`. Pos
// is the position of the keyword define.
type Define struct {
	Pos    Pos
	Name   string
	Params []string
	Body   Expr
}

// Rule is a bug rule: `[name] detect <state; point>: condition : VPC(x),
// ...`. Pos is the position of the opening "[".
type Rule struct {
	Pos   Pos
	Name  string
	State []string // the state parts the rule reads: Trace, H, F, P, S
	Point Point
	Cond  Expr
	VPC   []VPCRef // the values whose propagation chains locate the root cause; may be empty

	// StatePos holds the position of each element of State (same
	// length, when the parser filled it in; error messages use it).
	StatePos []Pos
}

// PointKind is the kind of a detection point: the kind of step the
// program is about to take when the rule's condition is evaluated. The
// zero value is no kind.
type PointKind uint8

// The detection points.
const (
	PointDerefR PointKind = iota + 1 // deref_r r: a memory read through pointer r
	PointDerefW                      // deref_w r: a memory write through pointer r
	PointDeref                       // deref r: a read or a write through pointer r
	PointFree                        // free r: a call of free or delete with pointer r
	PointUse                         // use v: v decides a conditional branch, forms an address or reaches a system call
	PointCall                        // call f v: a call of f, v its first argument
	PointRet                         // ret f v: a return from f, v the return value
)

// String gives the keyword of the detection point, as written in a rule.
func (k PointKind) String() string {
	switch k {
	case PointDerefR:
		return "deref_r"
	case PointDerefW:
		return "deref_w"
	case PointDeref:
		return "deref"
	case PointFree:
		return "free"
	case PointUse:
		return "use"
	case PointCall:
		return "call"
	case PointRet:
		return "ret"
	}
	return fmt.Sprintf("PointKind(%d)", uint8(k))
}

// pointKindOf returns the detection point a keyword names, or 0.
func pointKindOf(word string) PointKind {
	for k := PointDerefR; k <= PointRet; k++ {
		if k.String() == word {
			return k
		}
	}
	return 0
}

// Point is a rule's detection point: `free r`, `call f v`, `ret $fn v`.
// Pos is the position of its keyword.
type Point struct {
	Pos  Pos
	Kind PointKind
	Func string // call and ret only: the function, "$name" (with the $) for a parameter given on the command line
	Var  string // the variable the point binds: the pointer, the used value, the argument or the return value
}

// String formats the detection point as written in a rule: `free r`,
// `call f v`.
func (p Point) String() string {
	if p.Func != "" {
		return fmt.Sprintf("%s %s %s", p.Kind, p.Func, p.Var)
	}
	return fmt.Sprintf("%s %s", p.Kind, p.Var)
}

// VPCRef is one element of a rule's locator: `VPC(r)`. Pos is the
// position of VPC.
type VPCRef struct {
	Pos Pos
	Var string
}

// Expr is a formula or a term of a rule's condition or a define's body.
// The concrete types are *Binary, *Not, *Ident, *Number, *Null,
// *Wildcard, *Call and *Quant.
type Expr interface {
	Position() Pos
}

// Binary is X Op Y. Op is one of "&&" "||" (connectives), "==" "!=" "<"
// "<=" ">" ">=" (comparisons), "+" "-" (arithmetic) and "&" (bitwise
// and). P is the position where X starts.
type Binary struct {
	P    Pos
	Op   string
	X, Y Expr
}

// Not is !X. P is the position of the "!".
type Not struct {
	P Pos
	X Expr
}

// Ident is a name used as a value: a variable (a define's parameter, the
// detection point's variable, a quantifier's variable, or a free variable
// bound by the first predicate that names it), a bare word (malloc, free,
// call, ret, write in event patterns; a function name such as main), or a
// parameter given on the command line ("$name", with the $).
type Ident struct {
	P    Pos
	Name string
}

// Number is an integer literal, written in decimal or in hexadecimal
// (0x...).
type Number struct {
	P     Pos
	Value uint64
}

// Null is the keyword NULL, the null pointer.
type Null struct {
	P Pos
}

// Wildcard is _, which matches anything (in an event pattern or as the
// argument of a predicate).
type Wildcard struct {
	P Pos
}

// Call is Name(Args...): a define or a built-in function (see Builtins).
// P is the position of the name.
type Call struct {
	P    Pos
	Name string
	Args []Expr
}

// Quant is a quantifier: `exists event(_, malloc, _, bid) in Trace
// suchthat (formula)`, or `forall bid in H : formula`. P is the position
// of exists or forall.
type Quant struct {
	P      Pos
	Forall bool // forall rather than exists
	Event  bool // the binder is an event pattern event(...)

	// Vars holds the pattern's elements (*Wildcard, *Ident, *Number,
	// *Null) when Event is set, else the single binder *Ident.
	Vars []Expr
	Set  string // the set ranged over: Trace, H, F or P
	Body Expr

	// SetPos is the position of Set (zero when the quantifier was not
	// parsed; error messages use it).
	SetPos Pos
}

// Position implements Expr.
func (e *Binary) Position() Pos { return e.P }

// Position implements Expr.
func (e *Not) Position() Pos { return e.P }

// Position implements Expr.
func (e *Ident) Position() Pos { return e.P }

// Position implements Expr.
func (e *Number) Position() Pos { return e.P }

// Position implements Expr.
func (e *Null) Position() Pos { return e.P }

// Position implements Expr.
func (e *Wildcard) Position() Pos { return e.P }

// Position implements Expr.
func (e *Call) Position() Pos { return e.P }

// Position implements Expr.
func (e *Quant) Position() Pos { return e.P }
