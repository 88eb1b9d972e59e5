package tracehist

import (
	"strconv"
	"strings"
)

// Expr is an expression of an operations file: a C expression over the
// argument registers, the return value and memory.
type Expr interface {
	// Pos is where the expression starts (for a binary expression, its
	// operator).
	Pos() Pos
	// String formats the expression as C that parses back to the same
	// tree, with the parentheses it needs.
	String() string
	expr()
}

// IntLit is an integer literal: 42, 0x1f, 7u, 3L.
type IntLit struct {
	At    Pos
	Text  string // as written
	Value uint64
	// Type is the literal's C type by C's rules (its value, base and
	// suffix): "int", "unsigned int", "long", "unsigned long", "long long"
	// or "unsigned long long".
	Type string
}

// Reg is a register: "arg1" to "arg6" (rdi, rsi, rdx, rcx, r8, r9 at the
// call) or "ret" (rax at the return).
type Reg struct {
	At   Pos
	Name string
}

// Arg returns the argument's index, 0 for arg1 to 5 for arg6, or -1 for
// ret.
func (r *Reg) Arg() int {
	if r.Name == "ret" {
		return -1
	}
	return int(r.Name[3] - '1')
}

// TypeName is the type of a cast: an integer type, _Bool, void or a
// struct, and a number of pointer levels.
type TypeName struct {
	At Pos
	// Base is the canonical spelling of the base type: "int",
	// "unsigned long", "_Bool", "int32_t", "void", "struct node", or the
	// name of a typedef of a struct ("node_t"), which only a pointer may
	// use.
	Base string
	// Struct is the struct's name (as the trace's tables name struct
	// types) when Base is a struct or a typedef of one; "" otherwise.
	Struct string
	// Ptr counts the stars: 0 for an integer or _Bool, 1 for "int *".
	Ptr int
}

// String formats the type: "int", "struct node *", "char **".
func (t *TypeName) String() string {
	if t.Ptr == 0 {
		return t.Base
	}
	return t.Base + " " + strings.Repeat("*", t.Ptr)
}

// Cast is `(T)X`.
type Cast struct {
	At   Pos // the opening parenthesis
	Type *TypeName
	X    Expr
}

// Unary is a prefix operator: "*" (dereference), "&" (address of), "!"
// or "-".
type Unary struct {
	At Pos
	Op string
	X  Expr
}

// Binary is `X OP Y` with OP one of + - * & == != < <= > >= && ||.
type Binary struct {
	At   Pos // the operator
	Op   string
	X, Y Expr
}

// Index is `X[Index]`.
type Index struct {
	At    Pos // X's start
	X     Expr
	Index Expr
}

// Member is `X->Name` (Arrow) or `X.Name`.
type Member struct {
	At      Pos // X's start
	X       Expr
	Name    string
	NamePos Pos
	Arrow   bool
}

func (e *IntLit) expr() {}
func (e *Reg) expr()    {}
func (e *Cast) expr()   {}
func (e *Unary) expr()  {}
func (e *Binary) expr() {}
func (e *Index) expr()  {}
func (e *Member) expr() {}

// Pos returns where the literal starts.
func (e *IntLit) Pos() Pos { return e.At }

// Pos returns where the register's name starts.
func (e *Reg) Pos() Pos { return e.At }

// Pos returns the cast's opening parenthesis.
func (e *Cast) Pos() Pos { return e.At }

// Pos returns the operator's position.
func (e *Unary) Pos() Pos { return e.At }

// Pos returns the operator's position.
func (e *Binary) Pos() Pos { return e.At }

// Pos returns where the indexed expression starts.
func (e *Index) Pos() Pos { return e.At }

// Pos returns where the expression whose member it is starts.
func (e *Member) Pos() Pos { return e.At }

// String returns the literal as written.
func (e *IntLit) String() string { return e.Text }

// String returns the register's name.
func (e *Reg) String() string { return e.Name }

// String returns "(T)X".
func (e *Cast) String() string { return "(" + e.Type.String() + ")" + unaryOperand(e.X) }

// String returns "OPX".
func (e *Unary) String() string {
	x := unaryOperand(e.X)
	if e.Op == "-" && strings.HasPrefix(x, "-") || e.Op == "&" && strings.HasPrefix(x, "&") {
		return e.Op + " " + x // not -- or &&
	}
	return e.Op + x
}

// String returns "X OP Y", with parentheses around an operand that binds
// less tightly than OP (or as tightly, on the right).
func (e *Binary) String() string {
	p := precedence(e.Op)
	x, y := e.X.String(), e.Y.String()
	if b, ok := e.X.(*Binary); ok && precedence(b.Op) < p {
		x = "(" + x + ")"
	}
	if b, ok := e.Y.(*Binary); ok && precedence(b.Op) <= p {
		y = "(" + y + ")"
	}
	return x + " " + e.Op + " " + y
}

// precedence returns the level of a binary operator in binaryLevels
// (higher binds more tightly).
func precedence(op string) int {
	for i, l := range binaryLevels {
		for _, o := range l {
			if o == op {
				return i
			}
		}
	}
	return len(binaryLevels)
}

// String returns "X[I]".
func (e *Index) String() string { return postfixOperand(e.X) + "[" + e.Index.String() + "]" }

// String returns "X->N" or "X.N".
func (e *Member) String() string {
	if e.Arrow {
		return postfixOperand(e.X) + "->" + e.Name
	}
	return postfixOperand(e.X) + "." + e.Name
}

// postfixOperand formats x as the operand of a postfix operator.
func postfixOperand(x Expr) string {
	switch x.(type) {
	case *Cast, *Unary, *Binary:
		return "(" + x.String() + ")"
	}
	return x.String()
}

// unaryOperand formats x as the operand of a prefix operator or a cast.
func unaryOperand(x Expr) string {
	if _, ok := x.(*Binary); ok {
		return "(" + x.String() + ")"
	}
	return x.String()
}

// literalType returns the C type of an integer literal of value v, in hex
// (or octal) or decimal, with the given suffix flags, by C's rules (the
// first of the candidate types that holds v).
func literalType(v uint64, decimal, unsigned bool, longs int) string {
	var cands []string
	switch {
	case unsigned && longs == 0:
		cands = []string{"unsigned int", "unsigned long", "unsigned long long"}
	case unsigned && longs == 1:
		cands = []string{"unsigned long", "unsigned long long"}
	case unsigned:
		cands = []string{"unsigned long long"}
	case decimal && longs == 0:
		cands = []string{"int", "long", "long long"}
	case decimal && longs == 1:
		cands = []string{"long", "long long"}
	case decimal:
		cands = []string{"long long"}
	case longs == 0:
		cands = []string{"int", "unsigned int", "long", "unsigned long", "long long", "unsigned long long"}
	case longs == 1:
		cands = []string{"long", "unsigned long", "long long", "unsigned long long"}
	default:
		cands = []string{"long long", "unsigned long long"}
	}
	for _, c := range cands {
		it := intTypes[c]
		if it.holds(v) {
			return c
		}
	}
	// A decimal literal too big for long long: gcc makes it unsigned.
	return "unsigned long long"
}

// parseIntLit reads a literal's text: decimal or 0x hex digits and an
// optional u/l suffix. ok is false for malformed text or a value over 64
// bits.
func parseIntLit(text string) (v uint64, typ string, msg string) {
	digits := text
	base := 10
	if len(text) > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
		base = 16
		digits = text[2:]
	}
	end := 0
	for end < len(digits) && isDigitIn(digits[end], base) {
		end++
	}
	suffix := digits[end:]
	digits = digits[:end]
	if digits == "" {
		return 0, "", "malformed number " + strconv.Quote(text)
	}
	if base == 10 && len(digits) > 1 && digits[0] == '0' {
		return 0, "", "octal literal " + text + " (write decimal or 0x hex)"
	}
	unsigned, longs := false, 0
	s := strings.ToLower(suffix)
	switch s {
	case "":
	case "u":
		unsigned = true
	case "l":
		longs = 1
	case "ul", "lu":
		unsigned, longs = true, 1
	case "ll":
		longs = 2
	case "ull", "llu":
		unsigned, longs = true, 2
	default:
		return 0, "", "malformed number " + strconv.Quote(text)
	}
	if (s == "ll" || s == "ull" || s == "llu") && strings.Contains(suffix, "lL") || strings.Contains(suffix, "Ll") {
		return 0, "", "malformed number " + strconv.Quote(text) // C wants ll or LL, not lL
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, "", "integer literal " + text + " does not fit 64 bits"
	}
	return v, literalType(v, base == 10, unsigned, longs), ""
}

func isDigitIn(c byte, base int) bool {
	switch {
	case '0' <= c && c <= '9':
		return true
	case base == 16 && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
		return true
	}
	return false
}
