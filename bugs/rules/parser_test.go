package rules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// paperExample is the double-free specification of figure 3.10 of the
// dissertation, verbatim.
const paperExample = `define Allocated(r) = exists event(_, malloc, _, bid) in Trace suchthat (bid == Bid(r))
define Freed(r, r1) = exists event(_, free, r1, bid) in Trace suchthat (bid == Bid(r))
[double_free] detect <Trace; free r>: Allocated(r) && Freed(r, r1) :VPC(r), VPC(r1)
`

// examples are rules files that parse and check; the fuzz test and the
// round-trip tests start from them.
var examples = map[string]string{
	"fig-3.10": paperExample,
	// The six memory bug rules of figure 3.2.
	"fig-3.2": `# Figure 3.2: the auxiliary predicates ...
define Allocated(r) = exists event(_, malloc, _, bid) in Trace suchthat (bid == Bid(r))
define Freed(r, r1) = exists event(_, free, r1, bid) in Trace suchthat (bid == Bid(r))

// ... and the rules.
[unmatched_free] detect <Trace; free r>: !Allocated(r) || r != Begin(r) : VPC(r)
[double_free] detect <Trace; free r>: Allocated(r) && Freed(r, r1) : VPC(r), VPC(r1)
[dangling_pointer_deref] detect <Trace; deref r>: Allocated(r) && Freed(r, r1) : VPC(r), VPC(r1)
[null_pointer_deref] detect <Trace; deref r>: r == NULL : VPC(r)
[heap_buffer_overflow] detect <Trace; deref r>:
    Allocated(r) && !Freed(r, _) && (r < Begin(r) || r >= End(r))
    : VPC(r)
[uninitialized_read] detect <Trace; deref_r r>: !FindLast(_, write, r, _)
`,
	// The other bug classes of figure 3.6.
	"fig-3.6": `[possible_leak] detect <H; Trace; ret main v>: exists bid in H : Live(bid)
[definite_leak] detect <H; P; Trace; ret main v>: exists bid in H : !(exists r in P : Bid(r) == bid)
[leak_in_ts] detect <H; Trace; ret $transaction v>:
    exists bid in H : (FindLast(k, call, $transaction, _) && Time(bid) > k)
[gc_bug] detect <H; F; Trace; ret $gc v>:
    !((forall bid in H : IsAlive(bid)) && (forall bid in F : !IsAlive(bid)))
`,
	// Unicode operators, hexadecimal numbers, the other detection points.
	"extras": `define Mark(b) = Value(Begin(b)) & 0x1 ≠ 0
define Inside(r) = Begin(r) ≤ r ∧ AccessEnd(r) ≤ End(r)   # both ends
[cross] detect <Trace; P; deref_w r>: ¬Inside(r) ∨ Pointer(r) ∧ !Mark(r) : VPC(r)
[tainted] detect <Trace; use v>: !Defined(v) || v - 0x10 + 2 > 0xffffffffffff : VPC(v)
[bad_arg] detect <Trace; call $fn a>: a == NULL || exists event(t, call, $fn, a, 7) in Trace suchthat (t > 0)
[early] detect <S; Trace; deref_r r>: FindLast(t, free, r, _) && Size(r) - Idx(r) < Width(r) && AllocKind(r) == malloc
[kinds] detect <Trace; free p>: AllocKind(p) != FreeKind(p) && !Reachable(Bid(p)) && Block(p) == Block(p) : VPC(p)
`,
}

// shape prints an expression's tree with its node types, for tests that
// care about the structure and not only the text.
func shape(e Expr) string {
	switch e := e.(type) {
	case *Binary:
		return fmt.Sprintf("(%s %s %s)", shape(e.X), e.Op, shape(e.Y))
	case *Not:
		return fmt.Sprintf("Not(%s)", shape(e.X))
	case *Ident:
		return e.Name
	case *Number:
		return fmt.Sprintf("#%d", e.Value)
	case *Null:
		return "NULL"
	case *Wildcard:
		return "_"
	case *Call:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = shape(a)
		}
		return fmt.Sprintf("%s[%s]", e.Name, strings.Join(args, " "))
	case *Quant:
		vars := make([]string, len(e.Vars))
		for i, v := range e.Vars {
			vars[i] = shape(v)
		}
		q := "Exists"
		if e.Forall {
			q = "Forall"
		}
		if e.Event {
			q += "Event"
		}
		return fmt.Sprintf("%s{%s in %s: %s}", q, strings.Join(vars, " "), e.Set, shape(e.Body))
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T", e)
}

// parseCond parses one rule with the condition cond and returns it.
func parseCond(t *testing.T, cond string) Expr {
	t.Helper()
	f, err := Parse("c.rules", []byte("[t] detect <Trace; deref r>: "+cond+"\n"))
	if err != nil {
		t.Fatalf("Parse(%q): %v", cond, err)
	}
	if len(f.Rules) != 1 {
		t.Fatalf("Parse(%q): %d rules", cond, len(f.Rules))
	}
	return f.Rules[0].Cond
}

func TestParsePaperExample(t *testing.T) {
	f, err := ParseAndCheck("fig3.10.rules", []byte(paperExample))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Defines) != 2 || len(f.Rules) != 1 {
		t.Fatalf("%d defines, %d rules", len(f.Defines), len(f.Rules))
	}
	a, fr, r := f.Defines[0], f.Defines[1], f.Rules[0]
	if a.Name != "Allocated" || !reflect.DeepEqual(a.Params, []string{"r"}) || a.Pos != (Pos{"fig3.10.rules", 1, 1}) {
		t.Errorf("define %+v", a)
	}
	if got, want := shape(a.Body), "ExistsEvent{_ malloc _ bid in Trace: (bid == Bid[r])}"; got != want {
		t.Errorf("Allocated: %s, want %s", got, want)
	}
	if fr.Name != "Freed" || !reflect.DeepEqual(fr.Params, []string{"r", "r1"}) || fr.Pos.Line != 2 {
		t.Errorf("define %+v", fr)
	}
	if got, want := shape(fr.Body), "ExistsEvent{_ free r1 bid in Trace: (bid == Bid[r])}"; got != want {
		t.Errorf("Freed: %s, want %s", got, want)
	}
	if r.Name != "double_free" || r.Pos != (Pos{"fig3.10.rules", 3, 1}) || !reflect.DeepEqual(r.State, []string{"Trace"}) {
		t.Errorf("rule %+v", r)
	}
	if r.Point != (Point{Pos: Pos{"fig3.10.rules", 3, 30}, Kind: PointFree, Var: "r"}) {
		t.Errorf("point %+v", r.Point)
	}
	if got, want := shape(r.Cond), "(Allocated[r] && Freed[r r1])"; got != want {
		t.Errorf("condition %s, want %s", got, want)
	}
	want := []VPCRef{{Pos{"fig3.10.rules", 3, 69}, "r"}, {Pos{"fig3.10.rules", 3, 77}, "r1"}}
	if !reflect.DeepEqual(r.VPC, want) {
		t.Errorf("VPC %+v, want %+v", r.VPC, want)
	}
	q := a.Body.(*Quant)
	if q.P != (Pos{"fig3.10.rules", 1, 23}) || q.SetPos != (Pos{"fig3.10.rules", 1, 58}) {
		t.Errorf("quantifier at %s, set at %s", q.P, q.SetPos)
	}
}

func TestParseExamples(t *testing.T) {
	for name, src := range examples {
		f, err := ParseAndCheck(name, []byte(src))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(f.Rules) == 0 {
			t.Errorf("%s: no rules", name)
		}
	}
	f, _ := Parse("fig-3.2", []byte(examples["fig-3.2"]))
	want := map[string]string{
		"unmatched_free":         "free r: (Not(Allocated[r]) || (r != Begin[r])) VPC [r]",
		"double_free":            "free r: (Allocated[r] && Freed[r r1]) VPC [r r1]",
		"dangling_pointer_deref": "deref r: (Allocated[r] && Freed[r r1]) VPC [r r1]",
		"null_pointer_deref":     "deref r: (r == NULL) VPC [r]",
		"heap_buffer_overflow":   "deref r: ((Allocated[r] && Not(Freed[r _])) && ((r < Begin[r]) || (r >= End[r]))) VPC [r]",
		"uninitialized_read":     "deref_r r: Not(FindLast[_ write r _]) VPC []",
	}
	if len(f.Rules) != len(want) {
		t.Fatalf("%d rules", len(f.Rules))
	}
	for _, r := range f.Rules {
		var vpc []string
		for _, v := range r.VPC {
			vpc = append(vpc, v.Var)
		}
		got := fmt.Sprintf("%s: %s VPC [%s]", r.Point, shape(r.Cond), strings.Join(vpc, " "))
		if got != want[r.Name] {
			t.Errorf("%s: %s\nwant %s", r.Name, got, want[r.Name])
		}
	}
	f, _ = Parse("fig-3.6", []byte(examples["fig-3.6"]))
	want = map[string]string{
		"possible_leak": "<H Trace> ret main v: Exists{bid in H: Live[bid]}",
		"definite_leak": "<H P Trace> ret main v: Exists{bid in H: Not(Exists{r in P: (Bid[r] == bid)})}",
		"leak_in_ts":    "<H Trace> ret $transaction v: Exists{bid in H: (FindLast[k call $transaction _] && (Time[bid] > k))}",
		"gc_bug":        "<H F Trace> ret $gc v: Not((Forall{bid in H: IsAlive[bid]} && Forall{bid in F: Not(IsAlive[bid])}))",
	}
	for _, r := range f.Rules {
		got := fmt.Sprintf("<%s> %s: %s", strings.Join(r.State, " "), r.Point, shape(r.Cond))
		if got != want[r.Name] {
			t.Errorf("%s: %s\nwant %s", r.Name, got, want[r.Name])
		}
	}
	if p := f.Rules[2].Point; p.Kind != PointRet || p.Func != "$transaction" || p.Var != "v" {
		t.Errorf("leak_in_ts point %+v", p)
	}
}

func TestParseFormulas(t *testing.T) {
	tests := []struct{ src, shape string }{
		// Precedence: || < && < ! and quantifiers < comparisons < + - < &.
		{"a || b && c", "(a || (b && c))"},
		{"a && b || c", "((a && b) || c)"},
		{"a || b || c", "((a || b) || c)"},
		{"a && b && c", "((a && b) && c)"},
		{"!a && b", "(Not(a) && b)"},
		{"!a == b", "Not((a == b))"},
		{"!!a", "Not(Not(a))"},
		{"!(a || b)", "Not((a || b))"},
		{"a == b && c != d", "((a == b) && (c != d))"},
		{"a + 1 < b - 2", "((a + #1) < (b - #2))"},
		{"a - b - c", "((a - b) - c)"},
		{"a - (b - c)", "(a - (b - c))"},
		{"a + b & c", "(a + (b & c))"},
		{"a & b + c", "((a & b) + c)"},
		{"bid & 0x1 == 1", "((bid & #1) == #1)"},
		{"a <= b", "(a <= b)"},
		{"a >= b", "(a >= b)"},
		{"a > b", "(a > b)"},
		{"((a))", "a"},
		// Literals.
		{"r == NULL", "(r == NULL)"},
		{"r == 0x10", "(r == #16)"},
		{"r == 0XfF", "(r == #255)"},
		{"r == 0xffffffffffffffff", "(r == #18446744073709551615)"},
		{"r == 18446744073709551615", "(r == #18446744073709551615)"},
		{"r == 007", "(r == #7)"},
		{"Freed(r, _)", "Freed[r _]"},
		{"F()", "F[]"},
		{"F(a || b, G(c), (d))", "F[(a || b) G[c] d]"},
		{"x == $limit", "(x == $limit)"},
		{"r_1 == _tmp", "(r_1 == _tmp)"},
		// Unicode spellings.
		{"a ∧ b ∨ ¬c", "((a && b) || Not(c))"},
		{"a ≠ b", "(a != b)"},
		{"a ≤ b", "(a <= b)"},
		{"a ≥ b", "(a >= b)"},
		// Quantifiers, both forms.
		{"exists event(_, malloc, _, bid) in Trace suchthat (bid == Bid(r))", "ExistsEvent{_ malloc _ bid in Trace: (bid == Bid[r])}"},
		{"forall event(t, write, r, 0, NULL) in Trace suchthat (t > 1)", "ForallEvent{t write r #0 NULL in Trace: (t > #1)}"},
		{"exists event(_, call, $fn) in Trace suchthat (a || b)", "ExistsEvent{_ call $fn in Trace: (a || b)}"},
		{"exists b in H : Live(b)", "Exists{b in H: Live[b]}"},
		{"forall b in F : !IsAlive(b)", "Forall{b in F: Not(IsAlive[b])}"},
		{"exists b in H suchthat (Live(b) && b > 0)", "Exists{b in H: (Live[b] && (b > #0))}"},
		// The body after ":" is a unary formula.
		{"exists b in H : !X(b) && Y(b)", "(Exists{b in H: Not(X[b])} && Y[b])"},
		{"exists b in H : X(b) == 1 || c", "(Exists{b in H: (X[b] == #1)} || c)"},
		{"exists b in H : (X(b) && c)", "Exists{b in H: (X[b] && c)}"},
		{"exists a in H : forall b in F : a == b", "Exists{a in H: Forall{b in F: (a == b)}}"},
		{"c && exists b in H : X(b)", "(c && Exists{b in H: X[b]})"},
		{"!exists b in H : X(b)", "Not(Exists{b in H: X[b]})"},
		{"(exists b in H : X(b)) == c", "(Exists{b in H: X[b]} == c)"},
		{"F(exists b in H : X(b), c)", "F[Exists{b in H: X[b]} c]"},
	}
	for _, tc := range tests {
		e := parseCond(t, tc.src)
		if got := shape(e); got != tc.shape {
			t.Errorf("%s\n got  %s\n want %s", tc.src, got, tc.shape)
			continue
		}
		// Printing and parsing again gives the same tree.
		again := parseCond(t, FormatExpr(e))
		if shape(again) != tc.shape {
			t.Errorf("%s: round trip through %q gives %s", tc.src, FormatExpr(e), shape(again))
		}
	}
}

func TestParseComments(t *testing.T) {
	src := `# a comment line
// another one
define A(r) = # a comment inside a define
    Bid(r) == 1 // and at the end of a line
[r1] # between the name and detect
detect <Trace; // inside the header
free r>: A(r)#no space needed
# the file ends in a comment without a newline`
	f, err := ParseAndCheck("c.rules", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Defines) != 1 || shape(f.Defines[0].Body) != "(Bid[r] == #1)" {
		t.Errorf("defines %+v", f.Defines)
	}
	if len(f.Rules) != 1 || f.Rules[0].Point.Pos != (Pos{"c.rules", 7, 1}) || shape(f.Rules[0].Cond) != "A[r]" {
		t.Errorf("rules %+v", f.Rules)
	}
}

func TestParsePoints(t *testing.T) {
	tests := []struct {
		src  string
		want Point
	}{
		{"deref_r p", Point{Kind: PointDerefR, Var: "p"}},
		{"deref_w p", Point{Kind: PointDerefW, Var: "p"}},
		{"deref p", Point{Kind: PointDeref, Var: "p"}},
		{"free p", Point{Kind: PointFree, Var: "p"}},
		{"use v", Point{Kind: PointUse, Var: "v"}},
		{"call strcpy dst", Point{Kind: PointCall, Func: "strcpy", Var: "dst"}},
		{"call free p", Point{Kind: PointCall, Func: "free", Var: "p"}},
		{"ret main v", Point{Kind: PointRet, Func: "main", Var: "v"}},
		{"ret $transaction v", Point{Kind: PointRet, Func: "$transaction", Var: "v"}},
		// Parsed, and left to Check.
		{"use f v", Point{Kind: PointUse, Func: "f", Var: "v"}},
		{"call v", Point{Kind: PointCall, Var: "v"}},
	}
	for _, tc := range tests {
		f, err := Parse("p.rules", []byte("[t] detect <Trace; "+tc.src+">: v == 0"))
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		got := f.Rules[0].Point
		tc.want.Pos = Pos{"p.rules", 1, 20}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.src, got, tc.want)
		}
		if got.String() != tc.src {
			t.Errorf("%s prints as %q", tc.src, got.String())
		}
	}
	for k := PointDerefR; k <= PointRet; k++ {
		if pointKindOf(k.String()) != k {
			t.Errorf("%s does not name %d", k, k)
		}
	}
	if s := PointKind(0).String(); s != "PointKind(0)" {
		t.Errorf("PointKind(0) = %q", s)
	}
}

func TestParsePositions(t *testing.T) {
	src := "[p] detect <Trace; H; deref r>:\n  !(r + 1 == Bid(r)) && exists b in H : b == r\n"
	f, err := Parse("pos.rules", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Rules[0]
	if !reflect.DeepEqual(r.StatePos, []Pos{{"pos.rules", 1, 13}, {"pos.rules", 1, 20}}) {
		t.Errorf("state positions %v", r.StatePos)
	}
	and := r.Cond.(*Binary)
	not := and.X.(*Not)
	eq := not.X.(*Binary)
	sum := eq.X.(*Binary)
	call := eq.Y.(*Call)
	q := and.Y.(*Quant)
	for _, tc := range []struct {
		e    Expr
		line int
		col  int
	}{
		{and, 2, 3}, {not, 2, 3}, {eq, 2, 5}, {sum, 2, 5}, {sum.Y, 2, 9}, {call, 2, 14},
		{call.Args[0], 2, 18}, {q, 2, 25}, {q.Vars[0], 2, 32}, {q.Body, 2, 41},
	} {
		if p := tc.e.Position(); p != (Pos{"pos.rules", tc.line, tc.col}) {
			t.Errorf("%s at %s, want %d:%d", FormatExpr(tc.e), p, tc.line, tc.col)
		}
	}
	if q.SetPos != (Pos{"pos.rules", 2, 37}) {
		t.Errorf("set at %s", q.SetPos)
	}
	if s := (Pos{"x.rules", 3, 4}).String(); s != "x.rules:3:4" {
		t.Errorf("Pos.String() = %q", s)
	}
	if s := (Pos{Line: 3, Col: 4}).String(); s != "3:4" {
		t.Errorf("Pos.String() without a file = %q", s)
	}
}

func TestErrors(t *testing.T) {
	src := "define A(r) = r ==\n[x] detect <free r>: A(r)\n[y] detect <Trace; free r>: r @ 1\ndefine B(r) = C(r)\n"
	_, err := Parse("e.rules", []byte(src))
	var list Errors
	if !errors.As(err, &list) {
		t.Fatalf("error %T, want Errors", err)
	}
	want := `e.rules:2:1: unexpected "[", expected a formula
e.rules:2:13: unexpected "free", expected the state parts before the detection point, as in <Trace; free r>
e.rules:3:31: unexpected character '@'`
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	if list[0].Pos != (Pos{"e.rules", 2, 1}) || list[0].Msg != `unexpected "[", expected a formula` {
		t.Errorf("first error %+v", list[0])
	}
	// Check runs only on a file without syntax errors.
	_, err = ParseAndCheck("e.rules", []byte(src))
	if err.Error() != want {
		t.Errorf("ParseAndCheck: %v", err)
	}
	_, err = ParseAndCheck("e.rules", []byte("define B(r) = C(r)\n"))
	if err == nil || err.Error() != "e.rules:1:15: unknown function C (not a define or a built-in)" {
		t.Errorf("ParseAndCheck: %v", err)
	}
}

func TestParseTooManyErrors(t *testing.T) {
	src := strings.Repeat("define A(r) = r +\n", 80)
	f, err := Parse("m.rules", []byte(src))
	list, ok := err.(Errors)
	if !ok {
		t.Fatalf("error %T", err)
	}
	if len(list) != maxErrors+1 || list[len(list)-1].Msg != msgTooMany {
		t.Errorf("%d errors, last %v", len(list), list[len(list)-1])
	}
	for i := 0; i < maxErrors; i++ {
		if list[i].Pos.Line != i+2 {
			t.Fatalf("error %d on line %d", i, list[i].Pos.Line)
		}
	}
	if f == nil || len(f.Defines) != 0 {
		t.Errorf("file %+v", f)
	}
	// Check stops at 50 errors too.
	src = strings.Repeat("[a] detect <Trace; free r>: X(r)\n", 80)
	f, err = Parse("m.rules", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	list, _ = Check(f).(Errors)
	if len(list) != maxErrors+1 || list[len(list)-1].Msg != msgTooMany {
		t.Errorf("Check: %d errors", len(list))
	}
}

func TestParseDeepNesting(t *testing.T) {
	const n = 100000
	for _, cond := range []string{
		strings.Repeat("(", n) + "r",
		strings.Repeat("!", n) + "r",
		strings.Repeat("F(", n) + "r",
		strings.Repeat("exists b in H : ", n) + "r",
		strings.Repeat("exists b in H suchthat (", n) + "r",
		strings.Repeat("r + ", n) + "r",
		strings.Repeat("r & ", n) + "r",
		strings.Repeat("r && ", n) + "r",
		strings.Repeat("r || ", n) + "r",
		strings.Repeat("(r || ", n) + "r",
	} {
		_, err := Parse("d.rules", []byte("[d] detect <Trace; deref r>: "+cond+"\n[e] detect <Trace; deref r>: r == 0\n"))
		if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("%.20s...: %v", cond, err)
		}
	}
	// Nesting below the limit is fine, and so are long flat lists.
	cond := strings.Repeat("(", 300) + "r" + strings.Repeat(")", 300) + " == 1 && F(" + strings.Repeat("r, ", 5000) + "r)"
	f, err := Parse("d.rules", []byte("[d] detect <Trace; deref r>: "+cond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("d.rules", []byte(Format(f))); err != nil {
		t.Fatal(err)
	}
}

func TestParseRecovery(t *testing.T) {
	src := `garbage here
define A(r) = Bid(r) == 1
define B(r) = Bid(r) ==
define C(r) = Bid(r) == 2
[x] detect <Trace; free r>: A(r) ) junk
[y] detect <Trace; free r>: C(r)
[w] detect <Trace; free r>: C(r) garbage here
[z] detect <Trace; deref r>: r == NULL
`
	f, err := Parse("r.rules", []byte(src))
	want := `r.rules:1:1: unexpected "garbage", expected "define" or a rule ("[name] detect ...")
r.rules:4:1: unexpected "define", expected a formula
r.rules:5:34: unexpected ")", expected an operator, ":" and the VPC list, or the end of the rule (the next "define" or "[")
r.rules:7:34: unexpected "garbage", expected an operator, ":" and the VPC list, or the end of the rule (the next "define" or "[")`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	var names []string
	for _, d := range f.Defines {
		names = append(names, d.Name)
	}
	for _, r := range f.Rules {
		names = append(names, r.Name)
	}
	if strings.Join(names, " ") != "A C y z" {
		t.Errorf("parsed %v", names)
	}
}

// clearPos sets every Pos inside v to the zero Pos.
func clearPos(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearPos(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			clearPos(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(Pos{}) {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			clearPos(v.Field(i))
		}
	}
}

// sameFile reports whether two files are equal, positions aside.
func sameFile(a, b *File) bool {
	clearPos(reflect.ValueOf(a))
	clearPos(reflect.ValueOf(b))
	return reflect.DeepEqual(a, b)
}

func TestFormatRoundTrip(t *testing.T) {
	srcs := map[string]string{
		"quantifiers": `[q] detect <H; F; Trace; deref r>:
    (exists b in H : X(b)) && c || !(exists b in H : X(b)) && (exists b in F : Y(b) || Z(b))
    || exists a in H : forall b in F : a == b
    || c && exists b in H : X(b)
[q2] detect <Trace; deref r>: (c && exists b in H : X(b)) && d || (!exists b in H : X(b)) && e
[q3] detect <Trace; deref r>: !exists event(_, free, r, _) in Trace suchthat (r > 0) && !!(a && b) && !(a == b) && !F(a)
[q4] detect <Trace; deref r>: (exists b in H : X(b)) == (exists b in H : Y(b)) : VPC(r)
`,
		"arith": `[a] detect <Trace; deref r>: a - (b - c) == a - b - c && a & (b & c) == (a & b) & c
    && (a + b) & c == a + b & c && 0x10000 + 65535 > 0xffffffffffffffff && (a == b) == (c < d)`,
		"empty":        ``,
		"defines-only": `define F() = G() define G() = 1`,
	}
	for name, src := range examples {
		srcs[name] = src
	}
	for name, src := range srcs {
		f, err := Parse(name, []byte(src))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		out := Format(f)
		g, err := Parse(name, []byte(out))
		if err != nil {
			t.Errorf("%s: the formatted file does not parse: %v\n%s", name, err, out)
			continue
		}
		if again := Format(g); again != out {
			t.Errorf("%s: Format is not stable:\n%s\nthen\n%s", name, out, again)
		}
		if !sameFile(f, g) {
			t.Errorf("%s: round trip changes the file:\n%s", name, out)
		}
	}
}

func TestFormat(t *testing.T) {
	f, err := Parse("f.rules", []byte(paperExample+examples["fig-3.6"]))
	if err != nil {
		t.Fatal(err)
	}
	want := `define Allocated(r) = exists event(_, malloc, _, bid) in Trace suchthat (bid == Bid(r))
define Freed(r, r1) = exists event(_, free, r1, bid) in Trace suchthat (bid == Bid(r))

[double_free] detect <Trace; free r>: Allocated(r) && Freed(r, r1) : VPC(r), VPC(r1)
[possible_leak] detect <H; Trace; ret main v>: exists bid in H : Live(bid)
[definite_leak] detect <H; P; Trace; ret main v>: exists bid in H : !(exists r in P : Bid(r) == bid)
[leak_in_ts] detect <H; Trace; ret $transaction v>: exists bid in H : (FindLast(k, call, $transaction, _) && Time(bid) > k)
[gc_bug] detect <H; F; Trace; ret $gc v>: !((forall bid in H : IsAlive(bid)) && (forall bid in F : !IsAlive(bid)))
`
	if got := Format(f); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct{ src, want string }{
		{"r == 0x1", "r == 1"},
		{"r == 65535", "r == 65535"},
		{"r == 65536", "r == 0x10000"},
		{"a ∧ (b ∨ ¬c)", "a && (b || !c)"},
		{"(exists b in H : X(b)) && c", "(exists b in H : X(b)) && c"},
		{"c && (exists b in H : X(b))", "c && (exists b in H : X(b))"},
		{"!(a)", "!a"},
		{"!(a + 1)", "!(a + 1)"},
	} {
		if got := FormatExpr(parseCond(t, tc.src)); got != tc.want {
			t.Errorf("%s formats as %s, want %s", tc.src, got, tc.want)
		}
	}
	if Format(nil) != "" || FormatExpr(nil) != "<nil>" {
		t.Error("Format of nil")
	}
}

func TestBuiltins(t *testing.T) {
	want := map[string]int{
		"Bid": 1, "Idx": 1, "Begin": 1, "End": 1, "Size": 1, "Time": 1, "Value": 1, "Block": 1,
		"FindLast": 4, "IsAlive": 1, "Defined": 1, "Pointer": 1, "AccessEnd": 1, "Width": 1,
		"AllocKind": 1, "FreeKind": 1, "Reachable": 1, "StartReachable": 1, "LostRoot": 1, "System": 1, "Live": 1,
	}
	list := Builtins()
	if len(list) != len(want) {
		t.Errorf("%d built-ins, want %d", len(list), len(want))
	}
	for _, b := range list {
		if a, ok := want[b.Name]; !ok || a != b.Arity {
			t.Errorf("built-in %s/%d, want arity %d", b.Name, b.Arity, a)
		}
		if b.Doc == "" || strings.Contains(b.Doc, "\n") {
			t.Errorf("built-in %s: doc %q", b.Name, b.Doc)
		}
		if got, ok := LookupBuiltin(b.Name); !ok || got != b {
			t.Errorf("LookupBuiltin(%s) = %+v, %v", b.Name, got, ok)
		}
	}
	list[0].Name = "changed"
	if Builtins()[0].Name != "Bid" {
		t.Error("Builtins shares its slice")
	}
	if _, ok := LookupBuiltin("Allocated"); ok {
		t.Error("Allocated is a built-in")
	}
}

// Check must not panic on hand-built syntax trees with missing parts.
func TestCheckIncompleteTree(t *testing.T) {
	f := &File{
		Defines: []*Define{nil, {}, {Name: "D", Params: []string{"", "$x"}},
			{Name: "E", Body: &Binary{Op: "?", X: nil, Y: &Not{}}}},
		Rules: []*Rule{nil, {}, {Name: "r", State: []string{"Trace"}, StatePos: []Pos{{}},
			Point: Point{Kind: PointCall}, Cond: &Quant{Event: true, Vars: []Expr{nil, &Call{}, &Binary{}}},
			VPC: []VPCRef{{Var: ""}}},
			{Name: "s", State: []string{"H"}, Point: Point{Kind: 99},
				Cond: &Quant{Vars: []Expr{&Number{}}, Body: &Call{Name: "D", Args: []Expr{nil}}}},
		},
	}
	err := Check(f)
	if err == nil {
		t.Fatal("no error")
	}
	if err := Check(nil); err == nil {
		t.Fatal("Check(nil) succeeded")
	}
	if err := Check(&File{}); err != nil {
		t.Fatalf("Check of an empty file: %v", err)
	}
	_ = Format(f)
}

// TestFormatDeep formats the deepest files that parse, in the shapes
// where Format adds parentheses the source does not have; the result
// must parse too.
func TestFormatDeep(t *testing.T) {
	nest := func(n int, open, base, close string) string {
		return strings.Repeat(open, n) + base + strings.Repeat(close, n)
	}
	shapes := map[string]func(n int) string{
		"not-cmp":    func(n int) string { return nest(n, "!a == (", "a", ")") },
		"colon":      func(n int) string { return nest(n, "exists b in H : (", "X(b)", " && c)") },
		"not-colon":  func(n int) string { return nest(n, "!exists b in H : ", "X(b)", "") },
		"calls":      func(n int) string { return nest(n, "F(", "a", ")") },
		"arith":      func(n int) string { return nest(n, "a & (b + ", "c", ")") },
		"right-and":  func(n int) string { return nest(n, "c && (exists b in H : ", "X(b)", ")") },
		"chain":      func(n int) string { return strings.Repeat("a && ", n) + "a" },
		"not-arith":  func(n int) string { return nest(n, "!(a + (", "b", "))") },
		"event-body": func(n int) string { return nest(n, "exists event(_, _) in Trace suchthat (!", "a", ")") },
	}
	for name, gen := range shapes {
		parse := func(n int) (*File, bool) {
			f, err := Parse("d.rules", []byte("[d] detect <Trace; deref r>: "+gen(n)))
			if err != nil && !strings.Contains(err.Error(), "nested too deeply") {
				t.Fatalf("%s(%d): %v", name, n, err)
			}
			return f, err == nil
		}
		// The largest n that parses: parsing is monotone in n.
		lo, hi := 1, maxDepth+1
		if _, ok := parse(hi); ok {
			t.Fatalf("%s(%d) parses", name, hi)
		}
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if _, ok := parse(mid); ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		n := lo
		f, ok := parse(n)
		if !ok || n < maxDepth/4 {
			t.Errorf("%s: only %d levels parse", name, n)
			continue
		}
		out := Format(f)
		g, err := Parse("d.rules", []byte(out))
		if err != nil {
			t.Errorf("%s(%d): the formatted file does not parse: %.200v", name, n, err)
			continue
		}
		if !sameFile(f, g) {
			t.Errorf("%s(%d): round trip changes the file", name, n)
		}
	}
}

// TestBuiltinsDocumented checks that the language reference lists every
// built-in function with its arity and its doc line.
func TestBuiltinsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "bug-rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Builtins() {
		row := fmt.Sprintf("| `%s` | %d | %s |", b.Name, b.Arity, b.Doc)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/bug-rules.md lacks the row\n%s", row)
		}
	}
	if !strings.Contains(string(doc), "\n## Semantics\n") {
		t.Error("docs/bug-rules.md lacks the Semantics section")
	}
}
