// Package spec reads constraint specifications: the language of
// docs/spec-language.md (node types, bindings of types to allocation
// sites, C-points, user attributes with their rules, inter- and
// intra-node constraints). Parse turns a file into a *Spec and reports
// every error it finds as FILE:LINE:COL: message; Check validates a
// parsed spec against the struct layouts a trace carries.
package spec

import "fmt"

// Pos is a position in a spec file: 1-based line and column (in bytes).
type Pos struct {
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Spec is one parsed specification file.
type Spec struct {
	File        string        // the file name used in error messages
	Types       []*TypeDecl   // structure and ARRAY declarations, in file order
	Consts      []*ConstDecl  // named integer constants (CONST NAME = n;)
	Bindings    []*Binding    // ALLOC statements
	Frees       []*FreeDecl   // FREE statements (the ends of RETURNS blocks)
	Links       []*LinkDecl   // LINK statements (embedded links: intrusive structures)
	CPoints     []*CPoint     // CPOINT statements
	Attrs       []*AttrDecl   // user attributes, each with its rule
	Constraints []*Constraint // inter- and intra-node constraints, in file order
}

// TypeDecl declares a node type: `name FIELD n EDGE m;` or
// `ARRAY name [OF n];`.
type TypeDecl struct {
	Pos      Pos
	Name     string
	Array    bool
	Fields   int // FIELD n (structures)
	Edges    int // EDGE m (structures)
	SlotSize int // arrays: bytes per slot (1, 2, 4 or 8; 4 when OF is absent)
	// EdgeSlots says, for `ARRAY name OF 8 EDGE;`, that every slot of
	// such a node holding the head of a live typed node is an edge.
	EdgeSlots bool
}

// ConstDecl names an integer: `CONST BLACK = 1;`.
type ConstDecl struct {
	Pos   Pos
	Name  string
	Value int64
}

// Binding says which memory-graph nodes belong to a type:
// `type ALLOC site, site, ...;`.
type Binding struct {
	Pos   Pos
	Type  string
	Sites []Site
}

// Site is one allocation site of a binding: a source line (File and Line
// set) or a function (Func set) whose calls, directly or through callees,
// made the allocation; or, with Returns, a function of the program's own
// whose every return hands out a block: the pointer it returns, Size bytes
// (sizeof the type when Size is 0).
type Site struct {
	Pos     Pos
	File    string // as written: a base name or a path suffix
	Line    int
	Func    string
	Returns bool // `FUNC RETURNS [n]`: the blocks FUNC returns
	Size    int  // RETURNS n: the block size in bytes (0: sizeof the type)
}

func (s Site) String() string {
	switch {
	case s.Returns && s.Size > 0:
		return fmt.Sprintf("%s RETURNS %d", s.Func, s.Size)
	case s.Returns:
		return s.Func + " RETURNS"
	case s.Func != "":
		return s.Func
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// FreeDecl names the program's own functions that end the blocks an
// `ALLOC f RETURNS` binding of the type handed out: `type FREE f, g;`. A
// call of one of them ends the type's live RETURNS block headed at its
// first argument.
type FreeDecl struct {
	Pos   Pos
	Type  string
	Funcs []Site // function sites (Func set)
}

// LinkDecl declares embedded links of a structure type: `type LINK n, m;`.
// A pointer to the start of slot n of a live node of the type (the
// address of an embedded link struct, as intrusive lists and trees store
// it: `&task->link`) is an edge to that node, as a pointer to its head is.
type LinkDecl struct {
	Pos   Pos
	Type  string
	Slots []LinkSlot
}

// LinkSlot is one slot of a LINK statement, with its position.
type LinkSlot struct {
	Pos  Pos
	Slot int // 1-based, as in X[n]
}

// CPoint is a CPOINT statement: the entry or exit of a function, or the
// moment execution reaches a source line.
type CPoint struct {
	Pos  Pos
	Func string // ENTRY/EXIT C-points
	Exit bool   // EXIT rather than ENTRY
	File string // line C-points
	Line int
}

func (c CPoint) String() string {
	switch {
	case c.Func != "" && c.Exit:
		return c.Func + " EXIT"
	case c.Func != "":
		return c.Func + " ENTRY"
	}
	return fmt.Sprintf("%s:%d", c.File, c.Line)
}

// AttrDecl declares a user attribute `type.NAME;` together with the rule
// that computes it.
type AttrDecl struct {
	Pos  Pos
	Type string
	Name string
	Rule *Rule // nil when the declaration has no rule (a Check error)

	// Default is the attribute's value on the NULL vertex (a Deref whose
	// pointer is NULL or not the head of a typed node): the value of
	// `type.NAME DEFAULT n;`, or -1 when the declaration has no DEFAULT
	// (HasDefault false).
	Default    int64
	HasDefault bool
}

// Rule computes a user attribute for one node: `T X; guard => X.A = e1 ||
// X.A = e2;` (if guard then e1 else e2), or `T X; X.A = e;`.
type Rule struct {
	Pos   Pos
	Vars  []VarDecl
	Guard Expr    // nil when the rule is a single assignment
	Then  *Assign // the assignment when Guard holds (or the only one)
	Else  *Assign // the assignment when it does not (nil without Guard)
}

// Assign is `X.A = value` inside a rule.
type Assign struct {
	Pos   Pos
	Var   string
	Attr  string
	Value Expr
}

// VarDecl declares a node variable: `qdtree X;`.
type VarDecl struct {
	Pos  Pos
	Type string
	Name string
}

// Constraint is an inter-node constraint (`decls [guard =>] body;`) or an
// intra-node one (`decls for I in a to b, body;`).
type Constraint struct {
	Pos   Pos
	Index int    // 1-based, in file order among the constraints
	Text  string // the statement's source text (declarations included), whitespace folded
	Vars  []VarDecl
	Range *Range // intra-node constraints: the loop; nil otherwise
	Guard Expr   // nil when there is no guard
	Body  Expr
}

// Range is the loop of an intra-node constraint: `for I in From to To`
// (both ends included).
type Range struct {
	Pos      Pos
	Var      string
	From, To int64
}

// Expr is an expression. The concrete types are *Int, *Bool, *Ident,
// *Field, *Deref, *Attr, *Unary, *Binary, *Cond and *Aggregate.
type Expr interface {
	Position() Pos
	String() string // the expression in the spec's syntax, fully parenthesized where it matters
}

// Int is an integer literal (NULL is Int 0; a named constant is replaced
// by its value when it is declared before use, else it stays an *Ident).
type Int struct {
	Pos   Pos
	Value int64
}

// Bool is true or false.
type Bool struct {
	Pos   Pos
	Value bool
}

// Ident is a name: a node variable, the loop variable of an intra-node
// constraint, or a named constant.
type Ident struct {
	Pos  Pos
	Name string
}

// Field is the value in field slot Index (1-based) of the node Node
// denotes: `X[2]`, `X[I*4+1]`, `(X[2])[1]`, `X[2].(1)`.
type Field struct {
	Pos   Pos
	Node  Expr // *Ident or *Deref
	Index Expr
}

// Deref is the node that pointer field Index of Node points to: `(X[2])`.
// Where a value is expected it stands for the pointer value itself.
type Deref struct {
	Pos   Pos
	Node  Expr // *Ident or *Deref
	Index Expr
}

// Attr is an attribute of a node: a standard one (INDEGREE, OUTDEGREE,
// ISROOT, ISLEAF, INTERNAL, EXTERNAL) or a user attribute:
// `X.OUTDEGREE`, `(X[2]).HEIGHT`, `X[2].HEIGHT`.
type Attr struct {
	Pos  Pos
	Node Expr // *Ident or *Deref
	Name string
}

// Op is an operator.
type Op int

// The operators.
const (
	OpAdd    Op = iota + 1 // +
	OpSub                  // -
	OpMul                  // *
	OpDiv                  // /
	OpEq                   // ==
	OpNe                   // !=
	OpLt                   // <
	OpLe                   // <=
	OpGt                   // >
	OpGe                   // >=
	OpAnd                  // and
	OpOr                   // or
	OpEdge                 // ->   (also →)
	OpNoEdge               // !->  (also ↛)
	OpPath                 // ~>   (also ↠)
	OpNoPath               // !~>
	OpNeg                  // unary -
	OpAbs                  // |e|
	OpNot                  // unary ! (not in the contract; reserved)
	OpMod                  // %
	OpBitAnd               // &
	OpCompl                // unary ~ (bitwise complement)
)

var opNames = map[Op]string{
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpEq: "==", OpNe: "!=",
	OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpAnd: "and", OpOr: "or",
	OpEdge: "->", OpNoEdge: "!->", OpPath: "~>", OpNoPath: "!~>",
	OpNeg: "-", OpAbs: "|", OpNot: "!", OpMod: "%", OpBitAnd: "&", OpCompl: "~",
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// Unary is -X, ~X or |X|.
type Unary struct {
	Pos Pos
	Op  Op // OpNeg, OpCompl, OpAbs or OpNot
	X   Expr
}

// Binary is L Op R: arithmetic, a relation, and/or, or a connection
// (X -> Y, X !-> Y, X ~> Y, X !~> Y).
type Binary struct {
	Pos  Pos
	Op   Op
	L, R Expr
	// Via is, for a connection over chosen fields (`X ->[2] Y`,
	// `X ~>[2,3] Y`), the slot numbers whose edges count, in the order
	// written (a constant name is replaced by its value); nil for a
	// connection over every pointer slot and for the other operators.
	Via []*Int
}

// AggKind is the kind of an aggregate: a count or a sum.
type AggKind int

// The aggregates.
const (
	AggCount AggKind = iota + 1 // count(T V [: cond])
	AggSum                      // sum(T V [: cond], value)
)

func (k AggKind) String() string {
	if k == AggSum {
		return "sum"
	}
	return "count"
}

// Aggregate is `count(T V)`, `count(T V : cond)`, `sum(T V, value)` or
// `sum(T V : cond, value)`: the number of live nodes V of type T (for
// which Cond holds), or the sum of Value over them. Cond and Value may
// read the enclosing statement's variables.
type Aggregate struct {
	Pos   Pos
	Kind  AggKind
	Var   VarDecl
	Cond  Expr // nil: every node
	Value Expr // sums only
}

// Cond is `(cond) ? then : else`.
type Cond struct {
	Pos              Pos
	Cond, Then, Else Expr
}

// Position implements Expr.
func (e *Int) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Bool) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Ident) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Field) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Deref) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Attr) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Unary) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Binary) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Cond) Position() Pos { return e.Pos }

// Position implements Expr.
func (e *Aggregate) Position() Pos { return e.Pos }

func (e *Int) String() string   { return fmt.Sprint(e.Value) }
func (e *Bool) String() string  { return fmt.Sprint(e.Value) }
func (e *Ident) String() string { return e.Name }
func (e *Field) String() string { return fmt.Sprintf("%s[%s]", e.Node, e.Index) }
func (e *Deref) String() string { return fmt.Sprintf("(%s[%s])", e.Node, e.Index) }
func (e *Attr) String() string  { return fmt.Sprintf("%s.%s", e.Node, e.Name) }
func (e *Unary) String() string {
	if e.Op == OpAbs {
		return fmt.Sprintf("|%s|", e.X)
	}
	return fmt.Sprintf("%s%s", e.Op, e.X)
}
func (e *Binary) String() string {
	if len(e.Via) > 0 {
		return fmt.Sprintf("(%s %s%s %s)", e.L, e.Op, viaString(e.Via), e.R)
	}
	return fmt.Sprintf("(%s %s %s)", e.L, e.Op, e.R)
}

// viaString formats the chosen slots of a connection: `[2,3]`.
func viaString(via []*Int) string {
	b := []byte{'['}
	for i, n := range via {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Append(b, n.Value)
	}
	return string(append(b, ']'))
}

func (e *Aggregate) String() string {
	s := fmt.Sprintf("%s(%s %s", e.Kind, e.Var.Type, e.Var.Name)
	if e.Cond != nil {
		s += fmt.Sprintf(" : %s", e.Cond)
	}
	if e.Value != nil {
		s += fmt.Sprintf(", %s", e.Value)
	}
	return s + ")"
}
func (e *Cond) String() string { return fmt.Sprintf("((%s) ? %s : %s)", e.Cond, e.Then, e.Else) }

// Standard attribute names.
const (
	AttrInDegree  = "INDEGREE"
	AttrOutDegree = "OUTDEGREE"
	AttrIsRoot    = "ISROOT"
	AttrIsLeaf    = "ISLEAF"
	AttrInternal  = "INTERNAL"
	AttrExternal  = "EXTERNAL"
)

// Layout is the memory layout of a node type that Check compares a
// structure declaration with, and that the checker reads fields through:
// the struct of the same name in the trace's debug info.
type Layout struct {
	Name  string
	Size  uint64
	Slots []Slot // leaf slots in offset order (arrays and nested structs flattened)
}

// Slot is one field slot of a layout.
type Slot struct {
	Name    string
	Offset  uint64
	Size    uint64
	Pointer bool
}
