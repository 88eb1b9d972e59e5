package rules

import (
	"fmt"
	"strings"
)

// Format prints a file in canonical syntax: the defines, then the rules,
// one per line, with single spaces, the fewest parentheses that keep the
// tree (plus those around a quantifier written with ":" that is an
// operand of && or ||, and around any operand of ! that is not a name, a
// call, a literal, a ! or a suchthat quantifier), numbers below 65536 in
// decimal and larger ones in hexadecimal. An event pattern is printed
// with suchthat, a quantifier over one variable with ":". Parsing the
// result gives the same file, positions aside.
func Format(f *File) string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	for _, d := range f.Defines {
		if d != nil {
			b.WriteString(d.String())
			b.WriteByte('\n')
		}
	}
	if len(f.Defines) > 0 && len(f.Rules) > 0 {
		b.WriteByte('\n')
	}
	for _, r := range f.Rules {
		if r != nil {
			b.WriteString(r.String())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// String formats the define in canonical syntax (see Format):
// `define Freed(r, r1) = exists event(_, free, r1, bid) in Trace suchthat (bid == Bid(r))`.
func (d *Define) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "define %s(%s) = ", d.Name, strings.Join(d.Params, ", "))
	writeExpr(&b, d.Body, 0)
	return b.String()
}

// String formats the rule in canonical syntax (see Format):
// `[double_free] detect <Trace; free r>: Allocated(r) && Freed(r, r1) : VPC(r), VPC(r1)`.
func (r *Rule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] detect <", r.Name)
	for _, s := range r.State {
		fmt.Fprintf(&b, "%s; ", s)
	}
	fmt.Fprintf(&b, "%s>: ", r.Point)
	writeExpr(&b, r.Cond, 0)
	for i, v := range r.VPC {
		if i == 0 {
			b.WriteString(" : ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "VPC(%s)", v.Var)
	}
	return b.String()
}

// FormatExpr formats a formula or a term in canonical syntax (see
// Format).
func FormatExpr(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e, 0)
	return b.String()
}

// Precedence levels, loosest first.
const (
	precOr    = 1
	precAnd   = 2
	precUnary = 3 // ! and the quantifiers
	precCmp   = 4
	precSum   = 5
	precProd  = 6
	precAtom  = 7
)

// prec is the precedence level of an expression's outermost operator.
func prec(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		switch e.Op {
		case "||":
			return precOr
		case "&&":
			return precAnd
		case "+", "-":
			return precSum
		case "&":
			return precProd
		}
		return precCmp
	case *Not, *Quant:
		return precUnary
	}
	return precAtom
}

// colonQuant reports whether e is a quantifier printed with ":", whose
// body extends as far as a unary formula does.
func colonQuant(e Expr) bool {
	q, ok := e.(*Quant)
	return ok && !q.Event
}

// endsOpen reports whether e, printed at a level that needs no
// parentheses, ends with the body of a quantifier printed with ":".
func endsOpen(e Expr) bool {
	switch e := e.(type) {
	case *Quant:
		return !e.Event
	case *Binary:
		return (e.Op == "&&" || e.Op == "||") && endsOpen(e.Y)
	}
	return false
}

// writeExpr prints e, in parentheses when its level is below min.
func writeExpr(b *strings.Builder, e Expr, min int) {
	if e == nil {
		b.WriteString("<nil>")
		return
	}
	if prec(e) < min {
		b.WriteByte('(')
		writeExpr(b, e, 0)
		b.WriteByte(')')
		return
	}
	switch e := e.(type) {
	case *Binary:
		level := prec(e)
		left, right := level, level+1
		if level == precCmp {
			left, right = precSum, precSum
		}
		if level <= precAnd && endsOpen(e.X) {
			left = precAtom
		}
		if level <= precAnd && colonQuant(e.Y) {
			right = precAtom
		}
		writeExpr(b, e.X, left)
		fmt.Fprintf(b, " %s ", e.Op)
		writeExpr(b, e.Y, right)
	case *Not:
		b.WriteByte('!')
		min := precAtom
		if _, ok := e.X.(*Not); ok || (!colonQuant(e.X) && prec(e.X) == precUnary) {
			min = precUnary
		}
		writeExpr(b, e.X, min)
	case *Quant:
		if e.Forall {
			b.WriteString("forall ")
		} else {
			b.WriteString("exists ")
		}
		if e.Event {
			b.WriteString("event(")
			writeList(b, e.Vars)
			b.WriteByte(')')
		} else {
			writeList(b, e.Vars)
		}
		fmt.Fprintf(b, " in %s", e.Set)
		if e.Event {
			b.WriteString(" suchthat (")
			writeExpr(b, e.Body, 0)
			b.WriteByte(')')
		} else {
			b.WriteString(" : ")
			writeExpr(b, e.Body, precUnary)
		}
	case *Call:
		b.WriteString(e.Name)
		b.WriteByte('(')
		writeList(b, e.Args)
		b.WriteByte(')')
	case *Ident:
		b.WriteString(e.Name)
	case *Number:
		if e.Value < 1<<16 {
			fmt.Fprintf(b, "%d", e.Value)
		} else {
			fmt.Fprintf(b, "0x%x", e.Value)
		}
	case *Null:
		b.WriteString("NULL")
	case *Wildcard:
		b.WriteByte('_')
	default:
		fmt.Fprintf(b, "<%T>", e)
	}
}

// writeList prints expressions separated by ", ".
func writeList(b *strings.Builder, list []Expr) {
	for i, e := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(b, e, 0)
	}
}
