package tracehist

import (
	"encoding/binary"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// fakeTypes is a trace's struct types for tests.
type fakeTypes map[string]*tracepb.StructType

func (f fakeTypes) structType(name string) *tracepb.StructType { return f[name] }

func member(name string, off, size uint64, typ string) *tracepb.Member {
	return &tracepb.Member{Name: name, Offset: off, Size: size, TypeName: typ}
}

func pointerMember(name string, off uint64, typ, pointee string) *tracepb.Member {
	return &tracepb.Member{Name: name, Offset: off, Size: 8, TypeName: typ, Pointer: true, Pointee: pointee}
}

// testTypes are the struct types of the evaluator's tests, flattened as
// the recorder flattens them.
var testTypes = fakeTypes{
	// struct elem { int d[2]; struct { long x; long y; } s; };
	"elem": {Name: "elem", Size: 24, Kind: "struct", Members: []*tracepb.Member{
		member("d[0]", 0, 4, "int"), member("d[1]", 4, 4, "int"),
		member("s.x", 8, 8, "long int"), member("s.y", 16, 8, "long int"),
	}},
	// struct node { long val; struct node *next; _Bool flag; const char *name;
	//               double f; struct { int a; int b; } arr[2]; unsigned short u; char *(*fn)[2]; };
	"node": {Name: "node", Size: 72, Kind: "struct", Members: []*tracepb.Member{
		member("val", 0, 8, "long int"),
		pointerMember("next", 8, "struct node *", "node"),
		member("flag", 16, 1, "_Bool"),
		pointerMember("name", 24, "const char *", ""),
		member("f", 32, 8, "double"),
		member("arr[0].a", 40, 4, "int"), member("arr[0].b", 44, 4, "int"),
		member("arr[1].a", 48, 4, "int"), member("arr[1].b", 52, 4, "int"),
		member("u", 56, 2, "short unsigned int"),
		pointerMember("fn", 64, "char *(*)[2]", ""),
	}},
	// typedef struct { int n; int items[4]; char label[8]; } stk_t;
	"stk_t": {Name: "stk_t", Size: 28, Kind: "struct", Members: []*tracepb.Member{
		member("n", 0, 4, "int"),
		member("items[0]", 4, 4, "int"), member("items[1]", 8, 4, "int"),
		member("items[2]", 12, 4, "int"), member("items[3]", 16, 4, "int"),
		member("label[0]", 20, 1, "char"), member("label[1]", 21, 1, "char"),
		member("label[2]", 22, 1, "char"), member("label[3]", 23, 1, "char"),
		member("label[4]", 24, 1, "char"), member("label[5]", 25, 1, "char"),
		member("label[6]", 26, 1, "char"), member("label[7]", 27, 1, "char"),
	}},
}

// Addresses of the test memory.
const (
	elemAt  = 0x1000 // struct elem [2]: {{7, -3}, {-9, 5}}, {{100, 101}, {1, 2}}
	nodeAt  = 0x2000 // struct node: val 42, next -> node2, flag 1, name "hi"
	node2At = 0x2100 // struct node: val -5, next NULL
	stkAt   = 0x3000 // stk_t: n 2, items 10 20 30 40, label "one"
	strAt   = 0x4000 // "hi\0"
	intsAt  = 0x5000 // int [4]: 1 -2 3 0x7fffffff
	longAt  = 0x6000 // 0xffffffff80000001
	holeAt  = 0x7000 // 4 known bytes "abcd", no NUL, then unknown
	textAt  = 0x8000 // 21 bytes, no NUL
)

// testMemory builds the memory the evaluator's tests read.
func testMemory() *shadow {
	m := newShadow()
	put := func(addr uint64, size int, v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		m.write(addr, b[:size], 0)
	}
	i64 := func(v int64) uint64 { return uint64(v) }
	put(elemAt, 4, 7)
	put(elemAt+4, 4, i64(-3))
	put(elemAt+8, 8, i64(-9))
	put(elemAt+16, 8, 5)
	put(elemAt+24, 4, 100)
	put(elemAt+28, 4, 101)
	put(elemAt+32, 8, 1)
	put(elemAt+40, 8, 2)
	put(nodeAt, 8, 42)
	put(nodeAt+8, 8, node2At)
	put(nodeAt+16, 1, 1)
	put(nodeAt+24, 8, strAt)
	put(nodeAt+40, 4, 11)
	put(nodeAt+44, 4, 12)
	put(nodeAt+48, 4, 13)
	put(nodeAt+52, 4, 14)
	put(nodeAt+56, 2, 0xfffe)
	put(node2At, 8, i64(-5))
	put(node2At+8, 8, 0)
	put(stkAt, 4, 2)
	for i := range 4 {
		put(stkAt+4+uint64(4*i), 4, uint64(10*(i+1)))
	}
	m.write(stkAt+20, []byte("one\x00\x00\x00\x00\x00"), 0)
	m.write(strAt, []byte("hi\x00"), 0)
	put(intsAt, 4, 1)
	put(intsAt+4, 4, i64(-2))
	put(intsAt+8, 4, 3)
	put(intsAt+12, 4, 0x7fffffff)
	put(longAt, 8, 0xffffffff80000001)
	m.write(holeAt, []byte("abcd"), 0)
	m.write(textAt, []byte("abcdefghijklmnopqrstu"), 0)
	put(nodeAt+64, 8, 0)
	return m
}

// evalExpr compiles src against testTypes and evaluates it with args and
// ret over mem.
func evalExpr(src string, args [6]uint64, ret uint64, mem memReader) (lin.Value, error) {
	p := &parser{lx: lexer{src: src, line: 1}}
	e, perr := p.expr()
	if perr != nil {
		return lin.Value{}, &Error{Name: "t.lin", Line: perr.pos.Line, Col: perr.pos.Col, Msg: perr.msg}
	}
	if t, _ := p.peek(); t.kind != tEOL {
		return lin.Value{}, &Error{Name: "t.lin", Line: 1, Col: t.pos.Col, Msg: "trailing " + t.describe()}
	}
	c := &compiler{f: &OpsFile{Name: "t.lin"}, tt: testTypes}
	n, err := c.value(e)
	if err != nil {
		return lin.Value{}, err
	}
	return valueOf(n, &env{args: args, ret: ret, mem: mem, maxString: 16})
}

func TestEval(t *testing.T) {
	mem := testMemory()
	args := [6]uint64{elemAt, intsAt, 1, nodeAt, stkAt, 0xffffffffffffffff}
	const ret = 0x1_0000_0001
	i, b, s := lin.IntValue, lin.BoolValue, lin.StringValue
	for _, tc := range []struct {
		src  string
		want lin.Value
	}{
		// Registers and literals.
		{"arg3", i(1)},
		{"arg6", i(-1)},
		{"ret", i(0x1_0000_0001)},
		{"-1", i(-1)},
		{"0xffffffff", i(0xffffffff)},
		{"0xffffffffffffffff", i(-1)},
		// Casts truncate and extend as C does.
		{"(int)0xffffffff80000001", i(-2147483647)},
		{"(unsigned char)0x1ff", i(255)},
		{"(_Bool)2", b(true)},
		{"(bool)0", b(false)},
		{"(_Bool)0x100", b(true)},
		{"(char)0x80", i(-128)},
		{"(signed char)0xff", i(-1)},
		{"(short)0x18000", i(-32768)},
		{"(unsigned short)-1", i(65535)},
		{"(unsigned)-1", i(4294967295)},
		{"(unsigned int)arg6", i(4294967295)},
		{"(int)ret", i(1)},
		{"(long)(int)arg6", i(-1)},
		{"(unsigned long)(unsigned)arg6", i(4294967295)},
		{"(uint16_t)0x12345", i(0x2345)},
		{"(int8_t)0x80", i(-128)},
		{"(size_t)-1", i(-1)},
		{"(int)*(long *)arg2", i(1)},
		{"*(long *)arg2", i(-2<<32 | 1)},
		{"*(long *)0x6000", i(-0x7fffffff)},
		{"*(int *)0x6000", i(-2147483647)},
		{"*(unsigned *)0x6000", i(0x80000001)},
		// Pointer arithmetic scales by the pointee's size.
		{"((int *)arg2)[1]", i(-2)},
		{"((int *)arg2)[arg3 + 2]", i(0x7fffffff)},
		{"arg3[(int *)arg2]", i(-2)},
		{"*((int *)arg2 + 2)", i(3)},
		{"*(2 + (int *)arg2)", i(3)},
		{"*((int *)arg2 + 3 - 1)", i(3)},
		{"((unsigned char *)arg2)[4]", i(0xfe)},
		{"((short *)arg2)[2]", i(-2)},
		{"(int *)arg2 + 1", i(intsAt + 4)},
		{"(long)((char *)arg2 + 1)", i(intsAt + 1)},
		{"(void *)arg2 + 3", i(intsAt + 3)},
		{"(int *)arg2 + (unsigned char)0x101", i(intsAt + 4)},
		{"(int *)arg2 - 1", i(intsAt - 4)},
		{"(int *)arg2 + arg6", i(intsAt - 4)},
		{"&((int *)arg2)[3] - (int *)arg2", i(3)},
		{"(int *)arg2 - &((int *)arg2)[3]", i(-3)},
		{"((struct elem *)arg1 + 1)->d[0]", i(100)},
		{"((struct elem *)arg1)[1].s.y", i(2)},
		// Struct members, nested structs and arrays.
		{"((struct elem *)arg1)->d[0]", i(7)},
		{"((struct elem *)arg1)->d[1]", i(-3)},
		{"((struct elem *)arg1)->d[arg3]", i(-3)},
		{"((struct elem *)arg1)->s.x", i(-9)},
		{"((struct elem *)arg1)->s.y", i(5)},
		{"(*(struct elem *)arg1).s.y", i(5)},
		{"*((struct elem *)arg1)->d", i(7)},
		{"((struct elem *)arg1)->d", i(elemAt)},
		{"((struct elem *)arg1)->d[0] + ((struct elem *)arg1)->d[1]", i(4)},
		{"(long)&((struct elem *)arg1)->s.x", i(elemAt + 8)},
		{"(long)&*(struct elem *)arg1", i(elemAt)},
		{"((struct node *)arg4)->val", i(42)},
		{"((struct node *)arg4)->next->val", i(-5)},
		{"((struct node *)arg4)->next->next", i(0)},
		{"((struct node *)arg4)->flag", b(true)},
		{"((struct node *)arg4)->name", s("hi")},
		{"((struct node *)arg4)->next->next == 0", i(1)},
		{"((struct node *)arg4)->arr[1].a", i(13)},
		{"((struct node *)arg4)->arr[arg3].b", i(14)},
		{"((struct node *)arg4)->arr[0].b", i(12)},
		{"((struct node *)arg4)->u", i(0xfffe)},
		{"(long)((struct node *)arg4)->fn", i(0)},
		{"((stk_t *)arg5)->items[((stk_t *)arg5)->n - 1]", i(20)},
		{"((stk_t *)arg5)->label", s("one")},
		{"((stk_t *)arg5)->label[1]", i('n')},
		{"(char *)&((stk_t *)arg5)->label[1]", s("ne")},
		{"((stk_t *)arg5)->items + 1", i(stkAt + 8)},
		// Strings.
		{"(char *)arg2 + 0x4000 - 0x5000", s("hi")},
		{"(char *)0", lin.Value{}},
		{"(const char *)0x4001", s("i")},
		{"(unsigned char *)0x4000", s("hi")},
		// Comparisons and logic, with C's conversions.
		{"(int)-1 < 0", i(1)},
		{"(int)-1 < (unsigned)0", i(0)},
		{"(long)-1 < (unsigned)1", i(1)},
		{"-1 < 0u", i(0)},
		{"(unsigned char)0xff == -1", i(0)},
		{"(char)0xff == -1", i(1)},
		{"arg6 == -1", i(1)},
		{"(unsigned long)arg6 > 0", i(1)},
		{"arg6 > 0", i(0)},
		{"arg3 >= 1 && arg3 <= 1", i(1)},
		{"arg3 != 1 || !arg3", i(0)},
		{"!(int)ret", i(0)},
		{"!arg1", i(0)},
		{"arg3 == 1 || *(int *)0x9999", i(1)},
		{"arg3 == 1 && 0 && *(int *)0x9999", i(0)},
		{"(int *)arg2 == (int *)0x5000", i(1)},
		{"(int *)arg2 < (int *)0x5004", i(1)},
		{"((struct node *)arg4)->next != 0", i(1)},
		// Arithmetic and bitwise and.
		{"ret & 0xff", i(1)},
		{"(int)ret * -3 + 2", i(-1)},
		{"(unsigned)1 - 2", i(0xffffffff)},
		{"(unsigned char)200 + (unsigned char)100", i(300)},
		{"(short)0x7fff * 2", i(0xfffe)},
		{"0x7fffffff + 1", i(-0x80000000)},
		{"0x7fffffff + 1L", i(0x80000000)},
		{"- (unsigned)1", i(0xffffffff)},
		{"-(unsigned char)1", i(-1)},
	} {
		got, err := evalExpr(tc.src, args, ret, mem)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if !got.Equal(tc.want) {
			t.Errorf("%s = %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	mem := testMemory()
	args := [6]uint64{elemAt, intsAt, 1, nodeAt, stkAt, holeAt}
	for _, tc := range []struct{ src, want string }{
		// Found when compiling: the positions of the .lin file.
		{"((struct elem *)arg1)->e", `t.lin:1:24: struct elem has no member "e" (members: d[], s)`},
		{"((struct elem *)arg1)->s.z", `t.lin:1:26: s in struct elem has no member "z" (members: x, y)`},
		{"((struct nope *)arg1)->x", `t.lin:1:3: (struct nope *): the trace has no struct type nope (the program's debug information defines none by that name)`},
		{"(nope_t *)arg1", `t.lin:1:2: (nope_t *): the trace has no struct type nope_t (the program's debug information defines none by that name)`},
		{"((struct elem *)arg1)->d[2]", `t.lin:1:26: ((struct elem *)arg1)->d[2]: struct elem has no d[2] (the trace's layout has d[0] to d[1])`},
		{"((struct elem *)arg1)->s", `t.lin:1:1: ((struct elem *)arg1)->s is a struct inside struct elem: name one of its members (x, y)`},
		{"*(struct elem *)arg1", `t.lin:1:1: *(struct elem *)arg1 is a whole struct elem: name one of its members (d[], s)`},
		{"((struct elem *)arg1)->s[0]", `t.lin:1:1: ((struct elem *)arg1)->s[0]: ((struct elem *)arg1)->s is a struct, not an array (name a member: x, y)`},
		{"((struct elem *)arg1)->d.x", `t.lin:1:26: .x: ((struct elem *)arg1)->d is an array (index it first: ((struct elem *)arg1)->d[0].x)`},
		{"((struct elem *)arg1).d", `t.lin:1:23: .d: (struct elem *)arg1 has type struct elem *, not a struct (for a pointer, write ->)`},
		{"arg1->d", `t.lin:1:7: ->d: arg1 has type long, not a pointer to a struct (cast it: ((struct NAME *)arg1)->d)`},
		{"((int *)arg1)->d", `t.lin:1:16: ->d: (int *)arg1 has type int *, not a pointer to a struct (cast it: ((struct NAME *)arg1)->d)`},
		{"*arg1", `t.lin:1:1: *: arg1 has type long, not a pointer (cast it: *(int *)arg1)`},
		{"arg1[1]", `t.lin:1:1: arg1[1]: arg1 has type long; only a pointer or an array can be indexed (cast it: ((int *)arg1)[i])`},
		{"((int *)arg1)[(int *)arg2]", `t.lin:1:15: ((int *)arg1)[(int *)arg2]: the index (int *)arg2 is a pointer`},
		{"*(void *)arg1", `t.lin:1:1: *(void *)arg1: a void * points to nothing to read (cast it to another pointer type)`},
		{"((struct node *)arg4)->f", `t.lin:1:1: ((struct node *)arg4)->f: member f of struct node: its type is double; only integers and pointers can be read`},
		{"*((struct node *)arg4)->fn", `t.lin:1:1: *((struct node *)arg4)->fn: the trace does not say what this pointer points to (cast it: (int *), (struct NAME *))`},
		{"((struct node *)arg4)->fn + 1", `t.lin:1:1: ((struct node *)arg4)->fn: the trace does not say what this pointer points to, so not how far to step (cast it)`},
		{"((struct node *)arg4)->arr", `t.lin:1:1: ((struct node *)arg4)->arr is an array of structs or arrays: index it and name a member`},
		{"&((struct node *)arg4)->arr[0]", `t.lin:1:1: &: ((struct node *)arg4)->arr[0] is an aggregate inside a struct; take the address of one of its members or elements`},
		{"&arg1", `t.lin:1:1: &: arg1 is not in memory (& takes *p, p[i] or p->member)`},
		{"(int *)arg1 + (int *)arg2", `t.lin:1:13: +: cannot add two pointers`},
		{"1 - (int *)arg2", `t.lin:1:3: -: cannot subtract a pointer from an integer`},
		{"(int *)arg1 - (long *)arg2", `t.lin:1:13: -: int * and long * point to types of different sizes`},
		{"(int *)arg1 * 2", `t.lin:1:13: *: (int *)arg1 is a pointer (only + and - take pointers)`},
		{"2 & (int *)arg1", `t.lin:1:3: &: (int *)arg1 is a pointer (only + and - take pointers)`},
		{"-(int *)arg1", `t.lin:1:1: -: (int *)arg1 is a pointer`},
		// Found when evaluating: memory the trace did not show.
		{"*(int *)0x9999", `memory at 0x9999: the trace shows no value for it at this point`},
		{"((int *)arg2)[-1]", `memory at 0x4ffc: the trace shows no value for it at this point`},
		{"((struct node *)arg4)->next->next->val", `memory at 0x0: the trace shows no value for it at this point`},
		{"(char *)arg6", `memory at 0x7004: the trace shows no value for it at this point`},
		{"(char *)0x8000", `no NUL in the 16 bytes of the string at 0x8000`},
	} {
		_, err := evalExpr(tc.src, args, 0, mem)
		if err == nil {
			t.Errorf("%s: no error, want %s", tc.src, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

func TestShadow(t *testing.T) {
	m := newShadow()
	// An access across a page boundary.
	m.write(pageSize-2, []byte{1, 2, 3, 4}, 5)
	p := make([]byte, 4)
	if err := m.read(pageSize-2, p); err != nil || string(p) != "\x01\x02\x03\x04" {
		t.Errorf("read across pages = %v, %v", p, err)
	}
	if _, ok := m.byteAt(pageSize + 2); ok {
		t.Errorf("a byte never written is known")
	}
	m.forget(pageSize-1, 2, 7)
	if err := m.read(pageSize-2, p[:1]); err != nil {
		t.Errorf("forget forgot too much: %v", err)
	}
	if err := m.read(pageSize-2, p); err == nil || !isUnseen(err) {
		t.Errorf("read of forgotten bytes: %v", err)
	}
	// Pages remember the last event that wrote them.
	// (the forget at event 7 wrote pages 0 and 1; a store at event 11
	// writes page 3; a load does not count).
	m.write(3*pageSize+8, []byte{1}, 12)
	m.write(3*pageSize+9, []byte{1}, 0)
	for _, tc := range []struct {
		addr, seq uint64
		want      bool
	}{
		{pageSize - 2, 8, true}, {pageSize - 2, 7, false}, {pageSize + 1, 6, false},
		{3 * pageSize, 12, true}, {3 * pageSize, 11, false}, {5 * pageSize, 0, true},
	} {
		if got := m.unwrittenSince(tc.addr, tc.seq); got != tc.want {
			t.Errorf("unwrittenSince(%#x, %d) = %v", tc.addr, tc.seq, got)
		}
	}
	// The top of the address space.
	m.write(1<<64-2, []byte{9, 8}, 0)
	if b, ok := m.byteAt(1<<64 - 1); !ok || b != 8 {
		t.Errorf("last byte = %d %v", b, ok)
	}
	var buf [8]byte
	if got := accessBytes(&buf, 2, 0x1234, nil); string(got) != "\x34\x12" {
		t.Errorf("accessBytes = %x", got)
	}
	wide := []byte("0123456789abcdef")
	if got := accessBytes(&buf, 16, 0, wide); string(got) != string(wide) {
		t.Errorf("accessBytes wide = %q", got)
	}
}
