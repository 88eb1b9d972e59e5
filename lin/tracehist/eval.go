package tracehist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// DefaultMaxString is the longest string a char * value reads, in bytes,
// when Options.MaxString is 0.
const DefaultMaxString = 4096

// memReader reads the program's memory at the evaluation point.
type memReader interface {
	read(addr uint64, p []byte) error
}

// env is what an evaluation sees: the registers of one call and memory.
type env struct {
	args      [schema.NumArgs]uint64
	ret       uint64
	mem       memReader
	maxString int
}

// node is a compiled expression.
type node struct {
	t   *ctype
	src Expr
	// val computes the value of a scalar (integer, _Bool, pointer): its
	// bits, normalized to t. Nil for a struct or a struct's part.
	val func(*env) (uint64, error)
	// addr computes the address of an lvalue (*p, p[i], p->m); nil for
	// other expressions. For a struct or a part of one, base computes the
	// struct's start instead and path names the part.
	addr func(*env) (uint64, error)
	base func(*env) (uint64, error)
	path string
}

// compiler compiles expressions against the trace's struct types.
type compiler struct {
	f  *OpsFile
	tt typeTables
}

// schemaTypes looks struct types up in a trace's tables.
type schemaTypes struct{ t *schema.Tables }

func (s schemaTypes) structType(name string) *tracepb.StructType {
	if s.t == nil {
		return nil
	}
	return s.t.Types[name]
}

func (c *compiler) errAt(p Pos, format string, args ...any) error {
	return c.f.errorAt(p, format, args...)
}

// value compiles e for use as a value: a scalar, after an array decays
// to a pointer to its first element.
func (c *compiler) value(e Expr) (*node, error) {
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	return c.decay(n)
}

// decay turns an array part into a pointer to its first element and
// rejects other aggregates.
func (c *compiler) decay(n *node) (*node, error) {
	if n.t.scalar() {
		return n, nil
	}
	switch n.t.kind {
	case kPart:
		if lookupPart(n.t.st, n.path).array {
			el := lookupPart(n.t.st, n.path+"[0]")
			if el.leaf != nil {
				et, err := memberType(c.tt, el.leaf)
				if err != nil {
					return nil, c.errAt(n.src.Pos(), "%s: element %s of struct %s: %v", n.src, el.leaf.Name, n.t.st.Name, err)
				}
				base, off := n.base, el.offset
				return &node{t: pointerTo(et), src: n.src, val: func(v *env) (uint64, error) {
					b, err := base(v)
					return b + off, err
				}}, nil
			}
			return nil, c.errAt(n.src.Pos(), "%s is an array of structs or arrays: index it and name a member", n.src)
		}
		return nil, c.errAt(n.src.Pos(), "%s is a struct inside struct %s: name one of its members (%s)", n.src, n.t.st.Name, childList(n.t.st, n.path))
	case kStruct:
		return nil, c.errAt(n.src.Pos(), "%s is a whole %s: name one of its members (%s)", n.src, n.t.name, memberList(n.t.st))
	}
	return nil, c.errAt(n.src.Pos(), "%s has type %s, which has no value", n.src, n.t.name)
}

// compile compiles e.
func (c *compiler) compile(e Expr) (*node, error) {
	switch e := e.(type) {
	case *IntLit:
		t := intCType(e.Type)
		v := t.normalize(e.Value)
		return &node{t: t, src: e, val: func(*env) (uint64, error) { return v, nil }}, nil
	case *Reg:
		i := e.Arg()
		if i < 0 {
			return &node{t: tyLong, src: e, val: func(v *env) (uint64, error) { return v.ret, nil }}, nil
		}
		return &node{t: tyLong, src: e, val: func(v *env) (uint64, error) { return v.args[i], nil }}, nil
	case *Cast:
		x, err := c.value(e.X)
		if err != nil {
			return nil, err
		}
		t, err := castType(c.tt, e.Type)
		if err != nil {
			return nil, c.errAt(e.Type.At, "(%s): %v", e.Type, err)
		}
		xv := x.val
		return &node{t: t, src: e, val: func(v *env) (uint64, error) {
			b, err := xv(v)
			return t.normalize(b), err
		}}, nil
	case *Unary:
		return c.unary(e)
	case *Binary:
		return c.binary(e)
	case *Index:
		return c.index(e)
	case *Member:
		return c.member(e)
	}
	return nil, c.errAt(e.Pos(), "unknown expression %T", e)
}

func (c *compiler) unary(e *Unary) (*node, error) {
	switch e.Op {
	case "*":
		x, err := c.value(e.X)
		if err != nil {
			return nil, err
		}
		if x.t.kind != kPtr {
			return nil, c.errAt(e.At, "*: %s has type %s, not a pointer (cast it: *(int *)%s)", e.X, x.t.name, e.X)
		}
		return c.deref(e, x.t.elem, x.val)
	case "&":
		x, err := c.compile(e.X)
		if err != nil {
			return nil, err
		}
		switch {
		case x.t.kind == kStruct && x.base != nil:
			return &node{t: pointerTo(x.t), src: e, val: x.base}, nil
		case x.t.kind == kPart:
			return nil, c.errAt(e.At, "&: %s is an aggregate inside a struct; take the address of one of its members or elements", e.X)
		case x.addr == nil:
			return nil, c.errAt(e.At, "&: %s is not in memory (& takes *p, p[i] or p->member)", e.X)
		}
		return &node{t: pointerTo(x.t), src: e, val: x.addr}, nil
	case "!":
		x, err := c.value(e.X)
		if err != nil {
			return nil, err
		}
		xv := x.val
		return &node{t: tyInt, src: e, val: func(v *env) (uint64, error) {
			b, err := xv(v)
			if b == 0 {
				return 1, err
			}
			return 0, err
		}}, nil
	case "-":
		x, err := c.value(e.X)
		if err != nil {
			return nil, err
		}
		if x.t.kind == kPtr {
			return nil, c.errAt(e.At, "-: %s is a pointer", e.X)
		}
		t := promote(x.t)
		xv := x.val
		return &node{t: t, src: e, val: func(v *env) (uint64, error) {
			b, err := xv(v)
			return t.normalize(-b), err
		}}, nil
	}
	return nil, c.errAt(e.At, "unknown operator %s", e.Op)
}

// deref makes the lvalue of type t at the address addr computes.
func (c *compiler) deref(e Expr, t *ctype, addr func(*env) (uint64, error)) (*node, error) {
	switch t.kind {
	case kVoid:
		return nil, c.errAt(e.Pos(), "%s: a void * points to nothing to read (cast it to another pointer type)", e)
	case kOpaque:
		return nil, c.errAt(e.Pos(), "%s: the trace does not say what this pointer points to (cast it: (int *), (struct NAME *))", e)
	case kStruct:
		return &node{t: t, src: e, base: addr, addr: addr}, nil
	}
	return &node{t: t, src: e, addr: addr, val: readScalar(t, addr)}, nil
}

// readScalar reads a value of scalar type t at the address addr computes.
func readScalar(t *ctype, addr func(*env) (uint64, error)) func(*env) (uint64, error) {
	size := t.size
	return func(v *env) (uint64, error) {
		a, err := addr(v)
		if err != nil {
			return 0, err
		}
		var buf [8]byte
		if err := v.mem.read(a, buf[:size]); err != nil {
			return 0, err
		}
		return t.normalize(binary.LittleEndian.Uint64(buf[:])), nil
	}
}

// elemSize is the size pointer arithmetic scales by.
func (c *compiler) elemSize(e Expr, p *ctype) (uint64, error) {
	switch p.elem.kind {
	case kVoid:
		return 1, nil // as GNU C does
	case kOpaque:
		return 0, c.errAt(e.Pos(), "%s: the trace does not say what this pointer points to, so not how far to step (cast it)", e)
	}
	if p.elem.size == 0 {
		return 0, c.errAt(e.Pos(), "%s: %s has size 0", e, p.elem.name)
	}
	return p.elem.size, nil
}

func (c *compiler) binary(e *Binary) (*node, error) {
	x, err := c.value(e.X)
	if err != nil {
		return nil, err
	}
	y, err := c.value(e.Y)
	if err != nil {
		return nil, err
	}
	xv, yv := x.val, y.val
	xp, yp := x.t.kind == kPtr, y.t.kind == kPtr
	switch e.Op {
	case "&&", "||":
		and := e.Op == "&&"
		return &node{t: tyInt, src: e, val: func(v *env) (uint64, error) {
			a, err := xv(v)
			if err != nil {
				return 0, err
			}
			if (a != 0) != and { // && with a false left, || with a true one
				if and {
					return 0, nil
				}
				return 1, nil
			}
			b, err := yv(v)
			if b != 0 {
				return 1, err
			}
			return 0, err
		}}, nil
	case "==", "!=", "<", "<=", ">", ">=":
		signed := false
		var t *ctype
		if !xp && !yp {
			t = common(x.t, y.t)
			signed = t.signed
		}
		op := e.Op
		return &node{t: tyInt, src: e, val: func(v *env) (uint64, error) {
			a, err := xv(v)
			if err != nil {
				return 0, err
			}
			b, err := yv(v)
			if err != nil {
				return 0, err
			}
			if t != nil {
				a, b = t.normalize(a), t.normalize(b)
			}
			if compare(op, a, b, signed) {
				return 1, nil
			}
			return 0, nil
		}}, nil
	case "+", "-":
		switch {
		case xp && yp && e.Op == "-":
			sx, err := c.elemSize(e.X, x.t)
			if err != nil {
				return nil, err
			}
			sy, err := c.elemSize(e.Y, y.t)
			if err != nil {
				return nil, err
			}
			if sx != sy {
				return nil, c.errAt(e.At, "-: %s and %s point to types of different sizes", x.t.name, y.t.name)
			}
			return &node{t: tyLong, src: e, val: func(v *env) (uint64, error) {
				a, err := xv(v)
				if err != nil {
					return 0, err
				}
				b, err := yv(v)
				return uint64(int64(a-b) / int64(sx)), err
			}}, nil
		case xp && yp:
			return nil, c.errAt(e.At, "+: cannot add two pointers")
		case xp || yp:
			p, i, pv, iv := x, y, xv, yv
			if yp {
				if e.Op == "-" {
					return nil, c.errAt(e.At, "-: cannot subtract a pointer from an integer")
				}
				p, i, pv, iv = y, x, yv, xv
			}
			size, err := c.elemSize(p.src, p.t)
			if err != nil {
				return nil, err
			}
			it := promote(i.t)
			neg := e.Op == "-"
			return &node{t: p.t, src: e, val: func(v *env) (uint64, error) {
				a, err := pv(v)
				if err != nil {
					return 0, err
				}
				b, err := iv(v)
				if err != nil {
					return 0, err
				}
				b = it.normalize(b)
				if !it.signed && it.size < 8 {
					b &= 1<<(8*it.size) - 1
				}
				if neg {
					return a - b*size, nil
				}
				return a + b*size, nil
			}}, nil
		}
		fallthrough
	case "*", "&":
		if xp || yp {
			return nil, c.errAt(e.At, "%s: %s is a pointer (only + and - take pointers)", e.Op, pick(xp, e.X, e.Y))
		}
		t := common(x.t, y.t)
		op := e.Op
		return &node{t: t, src: e, val: func(v *env) (uint64, error) {
			a, err := xv(v)
			if err != nil {
				return 0, err
			}
			b, err := yv(v)
			if err != nil {
				return 0, err
			}
			a, b = t.normalize(a), t.normalize(b)
			var r uint64
			switch op {
			case "+":
				r = a + b
			case "-":
				r = a - b
			case "*":
				r = a * b
			case "&":
				r = a & b
			}
			return t.normalize(r), nil
		}}, nil
	}
	return nil, c.errAt(e.At, "unknown operator %s", e.Op)
}

func pick(first bool, a, b Expr) Expr {
	if first {
		return a
	}
	return b
}

// compare applies a comparison operator to two 64-bit values.
func compare(op string, a, b uint64, signed bool) bool {
	var lt, eq bool
	if signed {
		lt = int64(a) < int64(b)
	} else {
		lt = a < b
	}
	eq = a == b
	switch op {
	case "==":
		return eq
	case "!=":
		return !eq
	case "<":
		return lt
	case "<=":
		return lt || eq
	case ">":
		return !lt && !eq
	}
	return !lt // >=
}

func (c *compiler) index(e *Index) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if x.t.kind == kPart {
		return c.indexPart(e, x)
	}
	if x, err = c.decay(x); err != nil {
		return nil, err
	}
	i, err := c.value(e.Index)
	if err != nil {
		return nil, err
	}
	p := x
	if x.t.kind != kPtr {
		if i.t.kind != kPtr {
			return nil, c.errAt(e.At, "%s: %s has type %s; only a pointer or an array can be indexed (cast it: ((int *)%s)[i])", e, e.X, x.t.name, e.X)
		}
		p, i = i, x // i[p] is p[i]
	}
	if i.t.kind == kPtr {
		return nil, c.errAt(e.Index.Pos(), "%s: the index %s is a pointer", e, e.Index)
	}
	size, err := c.elemSize(p.src, p.t)
	if err != nil {
		return nil, err
	}
	pv, iv, it := p.val, i.val, promote(i.t)
	addr := func(v *env) (uint64, error) {
		a, err := pv(v)
		if err != nil {
			return 0, err
		}
		b, err := iv(v)
		return a + it.normalize(b)*size, err
	}
	return c.deref(e, p.t.elem, addr)
}

// indexPart indexes an array member of a struct: d[i] of p->d.
func (c *compiler) indexPart(e *Index, x *node) (*node, error) {
	st := x.t.st
	if !lookupPart(st, x.path).array {
		return nil, c.errAt(e.At, "%s: %s is a struct, not an array (name a member: %s)", e, e.X, childList(st, x.path))
	}
	if lit, ok := constIndex(e.Index); ok {
		path := x.path + "[" + strconv.FormatInt(lit, 10) + "]"
		if !lookupPart(st, path).found {
			return nil, c.errAt(e.Index.Pos(), "%s: struct %s has no %s (the trace's layout has %s)", e, st.Name, path, elementRange(st, x.path))
		}
		return c.partNode(e, st, path, x.base)
	}
	i, err := c.value(e.Index)
	if err != nil {
		return nil, err
	}
	if i.t.kind == kPtr {
		return nil, c.errAt(e.Index.Pos(), "%s: the index %s is a pointer", e, e.Index)
	}
	el0 := lookupPart(st, x.path+"[0]")
	stride := el0.extent
	if el1 := lookupPart(st, x.path+"[1]"); el1.found {
		stride = el1.offset - el0.offset
	}
	base, iv, it := x.base, i.val, promote(i.t)
	shifted := func(v *env) (uint64, error) {
		b, err := base(v)
		if err != nil {
			return 0, err
		}
		n, err := iv(v)
		return b + it.normalize(n)*stride, err
	}
	return c.partNode(e, st, x.path+"[0]", shifted)
}

// constIndex returns the value of an index that is a literal (possibly
// negated).
func constIndex(e Expr) (int64, bool) {
	switch e := e.(type) {
	case *IntLit:
		return int64(intCType(e.Type).normalize(e.Value)), true
	case *Unary:
		if e.Op == "-" {
			if v, ok := constIndex(e.X); ok {
				return -v, true
			}
		}
	}
	return 0, false
}

// elementRange formats the indexes an array part has: "d[0] to d[3]".
func elementRange(st *tracepb.StructType, path string) string {
	n := 0
	for lookupPart(st, path+"["+strconv.Itoa(n)+"]").found {
		n++
	}
	if n == 0 {
		return "no elements"
	}
	return fmt.Sprintf("%s[0] to %s[%d]", path, path, n-1)
}

func (c *compiler) member(e *Member) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if e.Arrow {
		if x, err = c.decay(x); err != nil {
			return nil, err
		}
		if x.t.kind != kPtr || x.t.elem.kind != kStruct {
			inner := e.X
			if cast, ok := inner.(*Cast); ok {
				inner = cast.X
			}
			return nil, c.errAt(e.NamePos, "->%s: %s has type %s, not a pointer to a struct (cast it: ((struct NAME *)%s)->%s)", e.Name, e.X, x.t.name, unaryOperand(inner), e.Name)
		}
		x = &node{t: x.t.elem, src: e.X, base: x.val, addr: x.val}
	} else if x.t.kind != kStruct && x.t.kind != kPart {
		return nil, c.errAt(e.NamePos, ".%s: %s has type %s, not a struct (for a pointer, write ->)", e.Name, e.X, x.t.name)
	}
	st := x.t.st
	if x.t.kind == kPart && lookupPart(st, x.path).array {
		return nil, c.errAt(e.NamePos, ".%s: %s is an array (index it first: %s[0].%s)", e.Name, e.X, e.X, e.Name)
	}
	path := e.Name
	if x.path != "" {
		path = x.path + "." + e.Name
	}
	if !lookupPart(st, path).found {
		if x.path == "" {
			return nil, c.errAt(e.NamePos, "struct %s has no member %q (members: %s)", st.Name, e.Name, memberList(st))
		}
		return nil, c.errAt(e.NamePos, "%s in struct %s has no member %q (members: %s)", x.path, st.Name, e.Name, childList(st, x.path))
	}
	return c.partNode(e, st, path, x.base)
}

// partNode makes the lvalue of the part path of struct st, whose start
// base computes: a scalar leaf, or a nested struct or array.
func (c *compiler) partNode(e Expr, st *tracepb.StructType, path string, base func(*env) (uint64, error)) (*node, error) {
	p := lookupPart(st, path)
	if p.leaf == nil {
		return &node{t: &ctype{kind: kPart, name: path + " of struct " + st.Name, size: p.extent, st: st}, src: e, base: base, path: path,
			addr: func(v *env) (uint64, error) {
				b, err := base(v)
				return b + p.offset, err
			}}, nil
	}
	t, err := memberType(c.tt, p.leaf)
	if err != nil {
		return nil, c.errAt(e.Pos(), "%s: member %s of struct %s: %v", e, path, st.Name, err)
	}
	off := p.offset
	addr := func(v *env) (uint64, error) {
		b, err := base(v)
		return b + off, err
	}
	if t.kind == kStruct { // cannot happen for a leaf, but keep deref's shape
		return &node{t: t, src: e, base: addr, addr: addr}, nil
	}
	return &node{t: t, src: e, addr: addr, val: readScalar(t, addr)}, nil
}

// valueOf evaluates a compiled scalar as an operation's datum: an integer,
// a boolean, a string for a pointer to characters (nil for a null one),
// an address for other pointers.
func valueOf(n *node, v *env) (lin.Value, error) {
	b, err := n.val(v)
	if err != nil {
		return lin.Value{}, err
	}
	switch n.t.kind {
	case kBool:
		return lin.BoolValue(b != 0), nil
	case kPtr:
		if n.t.elem.char {
			if b == 0 {
				return lin.Value{}, nil
			}
			s, err := readString(v, b)
			if err != nil {
				return lin.Value{}, err
			}
			return lin.StringValue(s), nil
		}
	}
	return lin.IntValue(int64(b)), nil
}

// readString reads a NUL-terminated string at addr.
func readString(v *env, addr uint64) (string, error) {
	limit := v.maxString
	if limit <= 0 {
		limit = DefaultMaxString
	}
	var s []byte
	var c [1]byte
	for i := 0; i < limit; i++ {
		if err := v.mem.read(addr+uint64(i), c[:]); err != nil {
			return "", err
		}
		if c[0] == 0 {
			return string(s), nil
		}
		s = append(s, c[0])
	}
	return "", fmt.Errorf("no NUL in the %d bytes of the string at %#x", limit, addr)
}

// truth evaluates a condition.
func truth(n *node, v *env) (bool, error) {
	b, err := n.val(v)
	return b != 0, err
}

// isUnseen reports whether err is a read of memory the trace did not show.
func isUnseen(err error) bool {
	var u *unseenError
	return errors.As(err, &u)
}
