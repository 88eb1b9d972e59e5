package tracehist

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

// full formats e with every binary expression in parentheses, to show
// the tree's shape.
func full(e Expr) string {
	post := func(x Expr) string {
		switch x.(type) {
		case *Cast, *Unary:
			return "(" + full(x) + ")"
		}
		return full(x)
	}
	switch e := e.(type) {
	case *Binary:
		return "(" + full(e.X) + " " + e.Op + " " + full(e.Y) + ")"
	case *Unary:
		return e.Op + full(e.X)
	case *Cast:
		return "(" + e.Type.String() + ")" + full(e.X)
	case *Index:
		return post(e.X) + "[" + full(e.Index) + "]"
	case *Member:
		if e.Arrow {
			return post(e.X) + "->" + e.Name
		}
		return post(e.X) + "." + e.Name
	}
	return e.String()
}

// dumpOps formats a parsed file with every position, for comparisons.
func dumpOps(f *OpsFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %s @%v\n", f.Model, f.ModelPos)
	if f.InitPos.IsValid() {
		fmt.Fprintf(&b, "init %v @%v\n", f.Init, f.InitPos)
	}
	if f.Object != nil {
		fmt.Fprintf(&b, "object %s @%v\n", full(f.Object), f.Object.Pos())
	}
	for _, o := range f.Ops {
		fmt.Fprintf(&b, "op %s @%v = %s @%v (op @%v)\n", o.Name, o.NamePos, o.Function, o.FunctionPos, o.Pos)
		for _, c := range o.Clauses {
			fmt.Fprintf(&b, "  %s @%v:", c.Kind, c.Pos)
			for _, e := range c.Exprs {
				fmt.Fprintf(&b, " %s @%v;", full(e), e.Pos())
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// goodOps are well-formed files and what they parse to.
var goodOps = []struct {
	name, src, want string
}{
	{"spec example", `model queue                 # required
init [1 1]                  # optional
object (long)arg1
op enqueue = lq_enqueue in (int)arg2
op dequeue = lq_dequeue out *(int *)arg2 empty if (int)ret == 0
op read    = snap_read  out ((int *)arg2)[0], ((int *)arg2)[1]
op write   = snap_write in (int)arg2, (int)arg3
op cas     = reg_cas    in (long)arg2, (long)arg3 out (_Bool)ret
op put     = kv_put     key (int)arg2 in (int)arg3
op add     = set_add    in (int)arg2 out (_Bool)ret
`, `model queue @1:7
init [1 1] @2:6
object (long)arg1 @3:8
op enqueue @4:4 = lq_enqueue @4:14 (op @4:1)
  in @4:25: (int)arg2 @4:28;
op dequeue @5:4 = lq_dequeue @5:14 (op @5:1)
  out @5:25: *(int *)arg2 @5:29;
  empty if @5:42: ((int)ret == 0) @5:60;
op read @6:4 = snap_read @6:14 (op @6:1)
  out @6:25: ((int *)arg2)[0] @6:29; ((int *)arg2)[1] @6:47;
op write @7:4 = snap_write @7:14 (op @7:1)
  in @7:25: (int)arg2 @7:28; (int)arg3 @7:39;
op cas @8:4 = reg_cas @8:14 (op @8:1)
  in @8:25: (long)arg2 @8:28; (long)arg3 @8:40;
  out @8:51: (_Bool)ret @8:55;
op put @9:4 = kv_put @9:14 (op @9:1)
  key @9:25: (int)arg2 @9:29;
  in @9:39: (int)arg3 @9:42;
op add @10:4 = set_add @10:14 (op @10:1)
  in @10:25: (int)arg2 @10:28;
  out @10:38: (_Bool)ret @10:42;
`},
	{"comments, blank lines, clause order, names with - and .", "# head\n\n\t model cas-register # tail\r\n" +
		"op cas = reg_cas.constprop.0 out (bool)ret in (long)arg2, (long)arg3 # c\n" +
		"op read = reg_read\n", `model cas-register @3:9
op cas @4:4 = reg_cas.constprop.0 @4:10 (op @4:1)
  out @4:30: (_Bool)ret @4:34;
  in @4:44: (long)arg2 @4:47; (long)arg3 @4:59;
op read @5:4 = reg_read @5:11 (op @5:1)
`},
	{"init values", `model snapshot
init [1 -2 "a#b\n" nil true false [0x10, [] -0x7fffffffffffffff]] # [] nested
op read = snap_read out (int)ret
`, `model snapshot @1:7
init [1 -2 "a#b\n" nil true false [16 [] -9223372036854775807]] @2:6
op read @3:4 = snap_read @3:11 (op @3:1)
  out @3:21: (int)ret @3:25;
`},
	{"one function per name, two per operation", `model queue
op enqueue = enq_a in (int)arg1
op enqueue = enq_b in (int)arg2
`, `model queue @1:7
op enqueue @2:4 = enq_a @2:14 (op @2:1)
  in @2:20: (int)arg1 @2:23;
op enqueue @3:4 = enq_b @3:14 (op @3:1)
  in @3:20: (int)arg2 @3:23;
`},
	{"operators and precedence", `model set
op add = set_add in -(int)arg2 * 3 + 1 fail if ret < 0 && !(ret & 1) || ret != -1 out (_Bool)(ret >= 1)
op get = kv_get key ((struct kv *)arg1)->d[0] out ((struct kv*)arg1)->s.x - 2 * -3 empty if !ret
op x = f in &((struct node *)arg1)->next->val, (*(struct node *)arg1).val, arg2[arg3], (const char *const)arg2, (node_t **)arg3
op y = g in (signed)arg4, (long unsigned int)arg5, (char)0xffffffff80000001UL, 7u, 3l, 0X1F, (unsigned)arg1 <= 4294967295
`, `model set @1:7
op add @2:4 = set_add @2:10 (op @2:1)
  in @2:18: ((-(int)arg2 * 3) + 1) @2:36;
  fail if @2:40: (((ret < 0) && !(ret & 1)) || (ret != -1)) @2:70;
  out @2:83: (_Bool)(ret >= 1) @2:87;
op get @3:4 = kv_get @3:10 (op @3:1)
  key @3:17: ((struct kv *)arg1)->d[0] @3:21;
  out @3:47: (((struct kv *)arg1)->s.x - (2 * -3)) @3:75;
  empty if @3:84: !ret @3:93;
op x @4:4 = f @4:8 (op @4:1)
  in @4:10: &((struct node *)arg1)->next->val @4:13; (*(struct node *)arg1).val @4:48; arg2[arg3] @4:76; (char *)arg2 @4:88; (node_t **)arg3 @4:113;
op y @5:4 = g @5:8 (op @5:1)
  in @5:10: (int)arg4 @5:13; (unsigned long)arg5 @5:27; (char)0xffffffff80000001UL @5:52; 7u @5:80; 3l @5:84; 0X1F @5:88; ((unsigned int)arg1 <= 4294967295) @5:109;
`},
}

func TestParseOpsGood(t *testing.T) {
	for _, tc := range goodOps {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseOps("x.lin", []byte(tc.src))
			if err != nil {
				t.Fatalf("ParseOps: %v", err)
			}
			if got := dumpOps(f); got != tc.want {
				t.Errorf("parsed:\n%s\nwant:\n%s", got, tc.want)
			}
			// String gives C that parses back to the same tree.
			for _, o := range f.Ops {
				for _, c := range o.Clauses {
					for _, e := range c.Exprs {
						p := &parser{lx: lexer{src: e.String(), line: 1}}
						back, perr := p.expr()
						if perr != nil || back.String() != e.String() {
							t.Errorf("%s: reparsed as %v (%v)", e, back, perr)
						}
					}
				}
			}
		})
	}
}

// TestParseOpsTree checks the nodes of a few expressions exactly.
func TestParseOpsTree(t *testing.T) {
	src := "model queue\nop read = r out ((int *)arg2)[1], ((struct s *)arg1)->d[0], -1, (uint8_t)ret\n"
	f, err := ParseOps("t.lin", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Ops[0].Clause(ClauseOut).Exprs
	want := []Expr{
		&Index{At: Pos{2, 17},
			X: &Cast{At: Pos{2, 18}, Type: &TypeName{At: Pos{2, 19}, Base: "int", Ptr: 1},
				X: &Reg{At: Pos{2, 25}, Name: "arg2"}},
			Index: &IntLit{At: Pos{2, 31}, Text: "1", Value: 1, Type: "int"}},
		&Index{At: Pos{2, 35},
			X: &Member{At: Pos{2, 35},
				X: &Cast{At: Pos{2, 36}, Type: &TypeName{At: Pos{2, 37}, Base: "struct s", Struct: "s", Ptr: 1},
					X: &Reg{At: Pos{2, 48}, Name: "arg1"}},
				Name: "d", NamePos: Pos{2, 55}, Arrow: true},
			Index: &IntLit{At: Pos{2, 57}, Text: "0", Value: 0, Type: "int"}},
		&Unary{At: Pos{2, 61}, Op: "-", X: &IntLit{At: Pos{2, 62}, Text: "1", Value: 1, Type: "int"}},
		&Cast{At: Pos{2, 65}, Type: &TypeName{At: Pos{2, 66}, Base: "uint8_t"}, X: &Reg{At: Pos{2, 74}, Name: "ret"}},
	}
	if !reflect.DeepEqual(got, want) {
		for i := range got {
			t.Errorf("expression %d: %#v", i, got[i])
		}
	}
	if c := f.Ops[0].Clause(ClauseIn); c != nil {
		t.Errorf("Clause(in) = %v, want nil", c)
	}
	if r := got[3].(*Cast).X.(*Reg); r.Arg() != -1 {
		t.Errorf("ret.Arg() = %d", r.Arg())
	}
	if r := got[0].(*Index).X.(*Cast).X.(*Reg); r.Arg() != 1 {
		t.Errorf("arg2.Arg() = %d", r.Arg())
	}
}

func TestIntLitTypes(t *testing.T) {
	for _, tc := range []struct {
		text, typ string
		v         uint64
	}{
		{"0", "int", 0},
		{"2147483647", "int", 1<<31 - 1},
		{"2147483648", "long", 1 << 31},
		{"0x7fffffff", "int", 1<<31 - 1},
		{"0x80000000", "unsigned int", 1 << 31},
		{"0xffffffff", "unsigned int", 1<<32 - 1},
		{"0x100000000", "long", 1 << 32},
		{"0xffffffff80000001", "unsigned long", 0xffffffff80000001},
		{"9223372036854775808", "unsigned long long", 1 << 63},
		{"1u", "unsigned int", 1},
		{"1UL", "unsigned long", 1},
		{"1lu", "unsigned long", 1},
		{"1ll", "long long", 1},
		{"1ULL", "unsigned long long", 1},
		{"0x1L", "long", 1},
		{"0xffffffffffffffffL", "unsigned long", 1<<64 - 1},
	} {
		v, typ, msg := parseIntLit(tc.text)
		if msg != "" || v != tc.v || typ != tc.typ {
			t.Errorf("parseIntLit(%s) = %#x %q %q, want %#x %q", tc.text, v, typ, msg, tc.v, tc.typ)
		}
	}
	for _, bad := range []string{"0x", "1lL", "1uu", "08", "1_0", "0x1g", "18446744073709551616", "1lll"} {
		if _, _, msg := parseIntLit(bad); msg == "" {
			t.Errorf("parseIntLit(%s) accepted", bad)
		}
	}
}

// badOps are malformed files and their exact errors.
var badOps = []struct {
	name, src, want string
}{
	{"empty file", "", "x.lin:1:1: no model line (want `model NAME`, e.g. `model queue`)"},
	{"no op lines", "model queue\n# nothing\n", "x.lin:1:1: no op lines (want `op NAME = FUNCTION CLAUSES...`)"},
	{"no model line", "op enqueue = enq in (int)arg2\n", "x.lin:1:1: no model line (want `model NAME`, e.g. `model queue`)"},
	{"one error per line, every bad line", `model queue
model stack
init [1 2
init 0x8000000000000000
object ret
op enqueue lq_enqueue in (int)arg2
op enqueue = lq_enqueue in (int)arg2 output (int)ret
op dequeue = lq_dequeue out (int)ret out (int)ret
op a = f1 in (float)arg2
op b = f2 in (foo)arg2
op c = f3 in (int)arg2 key (int)arg3, (int)arg4
op d = f4 empty (int)ret
op e = lq_enqueue in arg1
op f = f5 in (int)arg7
op g = f6 in ((int *)arg2[1]
op h = f7 in (int)ret
op i = f8 in 010
op j = f9 in 1_000 + 08
op k = f10 out *(int *)arg2 @
op l = f11 in (struct node)arg1
op m = f12 in (unsigned short long)arg1
op n = f13 out (int)arg2 ==
op o = f14 in "str"
frob x
op p = f15 in (void)arg1
op q = 9abc
op r = f16 in -
op s = f17 in (int)arg2, 
op t = lq_enqueue
`, `x.lin:2:1: a second model line (the first is at line 1)
x.lin:3:10: want ] to close the [ at column 6
x.lin:4:6: value 0x8000000000000000 does not fit a 64-bit signed integer
x.lin:5:8: ret in the object line, which is evaluated at the call, before there is a return value
x.lin:6:12: want = after the operation's name, not "lq_enqueue" (op NAME = FUNCTION ...)
x.lin:7:38: unexpected "output" after the in expression
x.lin:8:38: a second out clause (the first is at column 25; each clause at most once)
x.lin:9:15: unknown cast type "float" (want an integer type, _Bool, or a pointer: int *, struct NAME *)
x.lin:10:15: unknown cast type "foo" (want an integer type, _Bool, or a pointer: int *, struct NAME *)
x.lin:11:37: key takes one expression (only in and out take lists)
x.lin:12:17: want if after empty, not "("
x.lin:14:19: unknown name "arg7" (want arg1 to arg6, ret, a number, or a cast)
x.lin:15:29: want ) to close the ( at column 14, not end of line
x.lin:16:19: ret in the in clause, which is evaluated at the call, before there is a return value
x.lin:17:14: octal literal 010 (write decimal or 0x hex)
x.lin:18:14: malformed number "1_000"
x.lin:19:29: unexpected character '@'
x.lin:20:16: cast to struct node: only a pointer to a struct is a value (struct node *)
x.lin:21:31: unknown cast type "unsigned short long" (want an integer type, _Bool, or a pointer: int *, struct NAME *)
x.lin:22:28: want an operand after ==
x.lin:23:15: want an expression, not a string
x.lin:24:1: unknown line "frob": a line starts with model, init, object or op
x.lin:25:16: unknown cast type "void" (a cast gives a value; void * is a pointer)
x.lin:26:8: want the C function's name after =, not "9abc"
x.lin:27:16: want an operand after -
x.lin:28:26: want an expression after ,
x.lin:29:8: function lq_enqueue is already mapped at line 13 (a function implements one operation)`},
	{"repeated lines and functions", `model queue
object (long)arg1
init 1
op enqueue = enq in (int)arg2
init 2
object (long)arg2
op dequeue = enq
model queue
`, `x.lin:5:1: a second init line (the first is at line 3)
x.lin:6:1: a second object line (the first is at line 2)
x.lin:7:14: function enq is already mapped at line 4 (a function implements one operation)
x.lin:8:1: a second model line (the first is at line 1)`},
	{"statement shapes", `model
model queue extra
init
init 1 2
init [1 2]]
init -x
init 1u
object
object (long)arg1 (int)arg2
op
op 3 = f
op x = f in
op x = f fail (int)ret
op x = f key (int)arg1 (int)arg2
op x = f out ret ret
op x = f in (int)arg1 fail if ret out
3 x
op x = f in "unterminated
op x = f in (struct)arg1
op x = f in (struct s *)arg1->
op x = f in arg1[1
op x = f in (int arg1)
op x = f in ()arg1
op x = f in in
op x = f in (int)
op y = f2 in ((struct a struct b *)arg1)
op y = f2 in (struct a int *)arg1
op y = f2 in (long long long)arg1
op y = f2 in (char int)arg1
op y = f2 in (signed unsigned)arg1
init "ab\e"
init "\xg"
init "\400"
init "x\` + "\r" + `"
op z = f3 in ` + "\x01" + `
op z = f3 in ` + "\xc3\xa9" + `
`, `x.lin:1:1: no model line (want ` + "`model NAME`, e.g. `model queue`" + `)
x.lin:1:6: want a model name after model, not end of line
x.lin:2:13: unexpected "extra" after the model name
x.lin:3:5: want a value after init (3, -1, "s", nil, true, [1 2])
x.lin:4:8: unexpected "2" after the init value
x.lin:5:11: unexpected "]" after the init value
x.lin:6:7: want a number after -, not "x"
x.lin:7:6: malformed value "1u" (a value has no suffix)
x.lin:8:7: want an expression after object
x.lin:9:19: unexpected "(" after the object expression
x.lin:10:3: want the operation's name after op, not end of line (op NAME = FUNCTION ...)
x.lin:11:4: want the operation's name after op, not "3" (op NAME = FUNCTION ...)
x.lin:12:12: want an expression after in
x.lin:13:15: want if after fail, not "("
x.lin:14:24: unexpected "(" after the key expression
x.lin:15:18: unexpected "ret" after the out expression
x.lin:16:38: want an expression after out
x.lin:17:1: unexpected "3": a line starts with model, init, object or op
x.lin:18:13: unterminated string
x.lin:19:20: want the struct's name after struct, not ")"
x.lin:20:31: want a member name after ->, not end of line
x.lin:21:19: want ] to close the [ at column 17, not end of line
x.lin:22:18: want ) after the cast's type, not "arg1"
x.lin:23:14: want an expression, not ")"
x.lin:24:13: want an expression, not the clause keyword "in"
x.lin:25:18: want an operand after )
x.lin:26:25: unknown cast type: a second struct
x.lin:27:24: unknown cast type: struct a with "int"
x.lin:28:25: unknown cast type "long long long" (want an integer type, _Bool, or a pointer: int *, struct NAME *)
x.lin:29:20: unknown cast type "char int" (want an integer type, _Bool, or a pointer: int *, struct NAME *)
x.lin:30:22: unknown cast type "signed unsigned" (want an integer type, _Bool, or a pointer: int *, struct NAME *)
x.lin:31:9: malformed string: unknown escape "\\e"
x.lin:32:7: malformed string: \x without hex digits
x.lin:33:7: malformed string: octal escape above \377
x.lin:34:8: malformed string: unknown escape "\\\r"
x.lin:35:14: unexpected byte 0x01
x.lin:36:14: unexpected byte 0xc3`},
	{"nesting limit", "model queue\nop x = f in " + strings.Repeat("(", 200) + "arg1" + strings.Repeat(")", 200) + "\n" +
		"init " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
		`x.lin:2:113: expression nested more than 100 deep
x.lin:3:106: value nested more than 100 deep`},
}

func TestParseOpsBad(t *testing.T) {
	for _, tc := range badOps {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseOps("x.lin", []byte(tc.src))
			if err == nil {
				t.Fatalf("ParseOps accepted it:\n%s", dumpOps(f))
			}
			if err.Error() != tc.want {
				t.Errorf("errors:\n%s\nwant:\n%s", err, tc.want)
			}
			l := AsErrorList(err)
			if len(l) != strings.Count(tc.want, "\n")+1 {
				t.Errorf("AsErrorList gives %d errors", len(l))
			}
			var e *Error
			if !errors.As(err, &e) || e.Name != "x.lin" || e.Line < 1 || e.Col < 1 {
				t.Errorf("errors.As(*Error) = %v", e)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	src := "model queue\nop enqueue = enq in (int)arg2\nop deq = deq out (int)ret\nop push = push in (int)arg2\n"
	f, err := ParseOps("q.lin", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	knows := func(model, op string) error {
		switch {
		case model != "queue":
			return fmt.Errorf("unknown model %q", model)
		case op == "", op == "enqueue", op == "dequeue":
			return nil
		}
		return fmt.Errorf("model queue has no operation %q (it has enqueue, dequeue)", op)
	}
	err = f.Check(knows)
	want := `q.lin:3:4: model queue has no operation "deq" (it has enqueue, dequeue)
q.lin:4:4: model queue has no operation "push" (it has enqueue, dequeue)`
	if err == nil || err.Error() != want {
		t.Errorf("Check:\n%v\nwant:\n%s", err, want)
	}
	f.Model = "kew"
	if err := f.Check(knows); err == nil || err.Error() != `q.lin:1:7: unknown model "kew"` {
		t.Errorf("Check of an unknown model: %v", err)
	}
	f.Model, f.Ops = "queue", f.Ops[:1]
	if err := f.Check(knows); err != nil {
		t.Errorf("Check of a good file: %v", err)
	}
}

func TestParseOpsValues(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want lin.Value
	}{
		{"3", lin.IntValue(3)},
		{"-1", lin.IntValue(-1)},
		{"- 1", lin.IntValue(-1)},
		{"-9223372036854775808", lin.IntValue(-1 << 63)},
		{"0x7fffffffffffffff", lin.IntValue(1<<63 - 1)},
		{`"s\t\"x\""`, lin.StringValue("s\t\"x\"")},
		{`"a\0b\x41\101\7\1234\xfff\?\'\\\a\b\f\v\r\n"`, lin.StringValue("a\x00bAA\aS4\xfff?'\\\a\b\f\v\r\n")},
		{`""`, lin.StringValue("")},
		{"nil", lin.Value{}},
		{"true", lin.BoolValue(true)},
		{"false", lin.BoolValue(false)},
		{"[]", lin.ListValue()},
		{"[1 [2, [nil]] \"a\"]", lin.ListValue(lin.IntValue(1), lin.ListValue(lin.IntValue(2), lin.ListValue(lin.Value{})), lin.StringValue("a"))},
	} {
		f, err := ParseOps("v.lin", []byte("model register\ninit "+tc.src+"\nop read = r out (int)ret\n"))
		if err != nil {
			t.Errorf("init %s: %v", tc.src, err)
			continue
		}
		if !f.Init.Equal(tc.want) || f.InitPos != (Pos{2, 6}) {
			t.Errorf("init %s = %v at %v, want %v at 2:6", tc.src, f.Init, f.InitPos, tc.want)
		}
	}
}

func TestExprString(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"-(int)arg2 * 3 + 1", "-(int)arg2 * 3 + 1"},
		{"arg1 - (arg2 - arg3)", "arg1 - (arg2 - arg3)"},
		{"(arg1 - arg2) - arg3", "arg1 - arg2 - arg3"},
		{"(arg1 || arg2) && arg3", "(arg1 || arg2) && arg3"},
		{"arg1 == (arg2 < arg3)", "arg1 == arg2 < arg3"},
		{"(arg1 == arg2) < arg3", "(arg1 == arg2) < arg3"},
		{"- -1", "- -1"},
		{"-(-1)", "- -1"},
		{"*&*(int **)arg1", "*&*(int **)arg1"},
		{"(long)(arg1 + 1)", "(long)(arg1 + 1)"},
		{"((struct s *)arg1)->a.b[2]", "((struct s *)arg1)->a.b[2]"},
		{"(arg1 + 8)[0]", "(arg1 + 8)[0]"},
		{"(*(struct s *)arg1).x", "(*(struct s *)arg1).x"},
		{"!(arg1 & 0xff)", "!(arg1 & 0xff)"},
	} {
		p := &parser{lx: lexer{src: tc.src, line: 1}}
		e, err := p.expr()
		if err != nil {
			t.Errorf("%s: %s", tc.src, err.msg)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("%s prints as %s, want %s", tc.src, got, tc.want)
		}
	}
}
