package spec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// shape prints an expression's tree with its node types, for tests that
// care about the structure and not only the text.
func shape(e Expr) string {
	switch e := e.(type) {
	case *Int:
		return fmt.Sprintf("Int(%d)", e.Value)
	case *Bool:
		return fmt.Sprintf("Bool(%v)", e.Value)
	case *Ident:
		return e.Name
	case *Field:
		return fmt.Sprintf("Field(%s, %s)", shape(e.Node), shape(e.Index))
	case *Deref:
		return fmt.Sprintf("Deref(%s, %s)", shape(e.Node), shape(e.Index))
	case *Attr:
		return fmt.Sprintf("Attr(%s, %s)", shape(e.Node), e.Name)
	case *Unary:
		return fmt.Sprintf("Unary(%s, %s)", e.Op, shape(e.X))
	case *Binary:
		return fmt.Sprintf("Binary(%s, %s, %s)", e.Op, shape(e.L), shape(e.R))
	case *Cond:
		return fmt.Sprintf("Cond(%s, %s, %s)", shape(e.Cond), shape(e.Then), shape(e.Else))
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T", e)
}

// parseBody parses one constraint over X, Y and returns its body.
func parseBody(t *testing.T, expr string) Expr {
	t.Helper()
	src := "CONST BLACK = 1;\nnode X; node Y; " + expr + ";\n"
	s, err := Parse("e.spec", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	if len(s.Constraints) != 1 {
		t.Fatalf("Parse(%q): %d constraints", expr, len(s.Constraints))
	}
	return s.Constraints[0].Body
}

func TestParseExpressions(t *testing.T) {
	tests := []struct{ src, shape string }{
		// Vertex forms.
		{"X[2]", "Field(X, Int(2))"},
		{"(X[2])", "Deref(X, Int(2))"},
		{"((X[2]))", "Deref(X, Int(2))"},
		{"X.ISROOT", "Attr(X, ISROOT)"},
		{"(X).ISROOT", "Attr(X, ISROOT)"},
		{"X[2].HEIGHT", "Attr(Deref(X, Int(2)), HEIGHT)"},
		{"(X[2]).HEIGHT", "Attr(Deref(X, Int(2)), HEIGHT)"},
		{"X[2].(1)", "Field(Deref(X, Int(2)), Int(1))"},
		{"(X[2])[1]", "Field(Deref(X, Int(2)), Int(1))"},
		{"X[2][1]", "Field(Deref(X, Int(2)), Int(1))"},
		{"X.(1)", "Field(X, Int(1))"},
		{"((X[2])[3])", "Deref(Deref(X, Int(2)), Int(3))"},
		{"(X[2]).INDEGREE", "Attr(Deref(X, Int(2)), INDEGREE)"},
		{"(X[2] + 1)", "Binary(+, Field(X, Int(2)), Int(1))"},
		{"(X[2]) == Y", "Binary(==, Deref(X, Int(2)), Y)"},
		{"X[I*4 +1]", "Field(X, Binary(+, Binary(*, I, Int(4)), Int(1)))"},
		// Literals and constants.
		{"NULL", "Int(0)"},
		{"0x1F", "Int(31)"},
		{"-1", "Int(-1)"},
		{"- 1", "Int(-1)"},
		{"-9223372036854775808", "Int(-9223372036854775808)"},
		{"9223372036854775807", "Int(9223372036854775807)"},
		{"-(5)", "Unary(-, Int(5))"},
		{"--5", "Unary(-, Int(-5))"},
		{"-X[1]", "Unary(-, Field(X, Int(1)))"},
		{"true", "Bool(true)"},
		{"TRUE", "Bool(true)"},
		{"FALSE", "Bool(false)"},
		{"BLACK", "Int(1)"},
		{"RED", "RED"},
		// Precedence.
		{"1 + 2 * 3", "Binary(+, Int(1), Binary(*, Int(2), Int(3)))"},
		{"1 - 2 - 3", "Binary(-, Binary(-, Int(1), Int(2)), Int(3))"},
		{"8 / 2 / 2", "Binary(/, Binary(/, Int(8), Int(2)), Int(2))"},
		{"a or b and c", "Binary(or, a, Binary(and, b, c))"},
		{"a AND b OR c", "Binary(or, Binary(and, a, b), c)"},
		{"X[1] + 1 < X[2] and X.ISLEAF == true", "Binary(and, Binary(<, Binary(+, Field(X, Int(1)), Int(1)), Field(X, Int(2))), Binary(==, Attr(X, ISLEAF), Bool(true)))"},
		{"X -> Y or X ~> Y", "Binary(or, Binary(->, X, Y), Binary(~>, X, Y))"},
		// Absolute values, including "||" split in two.
		{"|X[1] - X[2]|", "Unary(|, Binary(-, Field(X, Int(1)), Field(X, Int(2))))"},
		{"||X[1]| - 2|", "Unary(|, Binary(-, Unary(|, Field(X, Int(1))), Int(2)))"},
		{"|2 - |X[1]||", "Unary(|, Binary(-, Int(2), Unary(|, Field(X, Int(1)))))"},
		{"||X[1]||", "Unary(|, Unary(|, Field(X, Int(1))))"},
		// Conditionals.
		{"(X[1] > 0) ? 1 : 2", "Cond(Binary(>, Field(X, Int(1)), Int(0)), Int(1), Int(2))"},
		{"(X[1] > 0) ? 1 : X[2] + 1", "Cond(Binary(>, Field(X, Int(1)), Int(0)), Int(1), Binary(+, Field(X, Int(2)), Int(1)))"},
		{"X[1] > 0 ? 1 : 2", "Cond(Binary(>, Field(X, Int(1)), Int(0)), Int(1), Int(2))"},
		{"1 + (X.ISLEAF) ? 2 : 3", "Binary(+, Int(1), Cond(Attr(X, ISLEAF), Int(2), Int(3)))"},
		{"(a) ? (b) ? 1 : 2 : 3", "Cond(a, Cond(b, Int(1), Int(2)), Int(3))"},
		// Connections and their spellings.
		{"X -> Y", "Binary(->, X, Y)"},
		{"X → Y", "Binary(->, X, Y)"},
		{"X !-> Y", "Binary(!->, X, Y)"},
		{"X ↛ Y", "Binary(!->, X, Y)"},
		{"X ~> Y", "Binary(~>, X, Y)"},
		{"X ->> Y", "Binary(~>, X, Y)"},
		{"X ↠ Y", "Binary(~>, X, Y)"},
		{"X !~> Y", "Binary(!~>, X, Y)"},
		{"X !->> Y", "Binary(!~>, X, Y)"},
		{"X ↛↠ Y", "Binary(!~>, X, Y)"},
		{"X->>Y", "Binary(~>, X, Y)"},
		{"(X[2]) -> Y", "Binary(->, Deref(X, Int(2)), Y)"},
		// Relations and their spellings.
		{"1 ≠ 2", "Binary(!=, Int(1), Int(2))"},
		{"1 ≤ 2", "Binary(<=, Int(1), Int(2))"},
		{"1 ≥ 2", "Binary(>=, Int(1), Int(2))"},
		{"1 >= -1", "Binary(>=, Int(1), Int(-1))"},
	}
	for _, tc := range tests {
		e := parseBody(t, tc.src)
		if got := shape(e); got != tc.shape {
			t.Errorf("%s\n got  %s\n want %s", tc.src, got, tc.shape)
			continue
		}
		// String round trip: printing and parsing again gives the same tree.
		again := parseBody(t, e.String())
		if again.String() != e.String() {
			t.Errorf("%s: round trip through %q gives %q", tc.src, e.String(), again.String())
		}
	}
}

func TestParsePositions(t *testing.T) {
	src := "node X; node Y;\n  (X[2]).HEIGHT + X[3].(1) >= -1 and |X[1]| == (X[1] > 0) ? 1 : 2;\n"
	s, err := Parse("p.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Constraints[0]
	if c.Pos != (Pos{1, 1}) {
		t.Errorf("constraint at %s, want 1:1", c.Pos)
	}
	and := c.Body.(*Binary)
	ge := and.L.(*Binary)
	add := ge.L.(*Binary)
	attr := add.L.(*Attr)
	field := add.R.(*Field)
	eq := and.R.(*Binary)
	abs := eq.L.(*Unary)
	cond := eq.R.(*Cond)
	checks := []struct {
		what string
		got  Pos
		want Pos
	}{
		{"and", and.Pos, Pos{2, 3}},
		{"(X[2]).HEIGHT", attr.Pos, Pos{2, 3}},
		{"deref", attr.Node.(*Deref).Pos, Pos{2, 3}},
		{"X in deref", attr.Node.(*Deref).Node.Position(), Pos{2, 4}},
		{"X[3].(1)", field.Pos, Pos{2, 19}},
		{"-1", ge.R.Position(), Pos{2, 31}},
		{"|X[1]|", abs.Pos, Pos{2, 38}},
		{"cond", cond.Pos, Pos{2, 48}},
		{"X var", c.Vars[0].Pos, Pos{1, 1}},
		{"Y var", c.Vars[1].Pos, Pos{1, 9}},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s at %s, want %s", ck.what, ck.got, ck.want)
		}
	}
}

func TestParseStatements(t *testing.T) {
	src := `# a comment at the start of a line
   # and one after blanks
qdtree FIELD 9 EDGE 5; // structure
ARRAY shard;
ARRAY wide OF 8;
CONST BLACK = 1; CONST RED = 0x0; CONST NEG = -7; CONST ALIAS = BLACK;
qdtree ALLOC qdtree.c:19, qdtree.c:35;
qdtree ALLOC split, insert;
shard ALLOC src/graph-chi/shard_1.c:120, Ns::Shard::load;
CPOINT insert ENTRY;
CPOINT insert EXIT;
CPOINT qdtree.c:28;
CPOINT ../lib/q.c:7 ;
qdtree.DEPTH DEFAULT 0;
qdtree X; X.DEPTH = X.INDEGREE + BLACK;
avltree.HEIGHT; avltree X;
X.ISLEAF == true => X.HEIGHT = 0 || X.HEIGHT = 1;
qdtree X; qdtree Y;
   X ~> Y
      => Y !~> X;
qdtree X; X.ISROOT;
shard X; for I in -2 to NEG, X[I] < X[I+1];
shard X; for I in 0 to 6, X[I] != 0 => X[I] <= X[I+1];
`
	s, err := Parse("s.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `qdtree FIELD 9 EDGE 5;
ARRAY shard;
ARRAY wide OF 8;
CONST BLACK = 1;
CONST RED = 0;
CONST NEG = -7;
CONST ALIAS = 1;
qdtree ALLOC qdtree.c:19, qdtree.c:35;
qdtree ALLOC split, insert;
shard ALLOC src/graph-chi/shard_1.c:120, Ns::Shard::load;
CPOINT insert ENTRY;
CPOINT insert EXIT;
CPOINT qdtree.c:28;
CPOINT ../lib/q.c:7;
qdtree.DEPTH DEFAULT 0;
qdtree X; X.DEPTH = (X.INDEGREE + 1);
avltree.HEIGHT;
avltree X; (X.ISLEAF == true) => X.HEIGHT = 0 || X.HEIGHT = 1;
qdtree X; qdtree Y; (X ~> Y) => (Y !~> X);
qdtree X; X.ISROOT;
shard X; for I in -2 to -7, (X[I] < X[(I + 1)]);
shard X; for I in 0 to 6, (X[I] != 0) => (X[I] <= X[(I + 1)]);
`
	if got := s.String(); got != want {
		t.Errorf("String:\n%s\nwant:\n%s", got, want)
	}
	// Parsing the printed spec prints the same.
	s2, err := Parse("s2.spec", []byte(s.String()))
	if err != nil {
		t.Fatal(err)
	}
	if s2.String() != s.String() {
		t.Errorf("round trip:\n%s\nwant:\n%s", s2, s)
	}

	if d := s.Types[2]; !d.Array || d.SlotSize != 8 || d.Pos != (Pos{5, 1}) {
		t.Errorf("ARRAY wide OF 8: %+v", d)
	}
	if d := s.Types[1]; d.SlotSize != 4 {
		t.Errorf("ARRAY shard: slot size %d, want 4", d.SlotSize)
	}
	b := s.Bindings[2]
	if b.Sites[0].File != "src/graph-chi/shard_1.c" || b.Sites[0].Line != 120 || b.Sites[1].Func != "Ns::Shard::load" || b.Sites[1].Pos != (Pos{9, 42}) {
		t.Errorf("sites: %+v", b.Sites)
	}
	if c := s.CPoints[1]; c.Func != "insert" || !c.Exit {
		t.Errorf("CPOINT insert EXIT: %+v", c)
	}
	if c := s.CPoints[2]; c.File != "qdtree.c" || c.Line != 28 {
		t.Errorf("CPOINT qdtree.c:28: %+v", c)
	}
	a := s.Attrs[0]
	if !a.HasDefault || a.Default != 0 || a.Rule == nil || a.Rule.Guard != nil || a.Rule.Else != nil {
		t.Errorf("qdtree.DEPTH: %+v", a)
	}
	h := s.Attrs[1]
	if h.HasDefault || h.Default != -1 || h.Rule == nil || h.Rule.Pos != (Pos{16, 17}) || h.Rule.Then.Pos != (Pos{17, 21}) || h.Rule.Else.Pos != (Pos{17, 37}) {
		t.Errorf("avltree.HEIGHT: %+v %+v %+v", h, h.Rule, h.Rule.Then)
	}
	texts := []string{
		"qdtree X; qdtree Y; X ~> Y => Y !~> X;",
		"qdtree X; X.ISROOT;",
		"shard X; for I in -2 to NEG, X[I] < X[I+1];",
		"shard X; for I in 0 to 6, X[I] != 0 => X[I] <= X[I+1];",
	}
	for i, c := range s.Constraints {
		if c.Index != i+1 {
			t.Errorf("constraint %d has Index %d", i+1, c.Index)
		}
		if c.Text != texts[i] {
			t.Errorf("constraint %d Text %q, want %q", i+1, c.Text, texts[i])
		}
	}
	if r := s.Constraints[2].Range; r == nil || r.Var != "I" || r.From != -2 || r.To != -7 {
		t.Errorf("range: %+v", r)
	}
}

func TestParseRuleAttachment(t *testing.T) {
	src := `t FIELD 2 EDGE 1;
t.A; t.B;
t X; X.B = 1;
t X; X.A = 2;
t.C;
t X; X.ISLEAF == true;
t X; X.C = 3;
`
	s, err := Parse("r.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Attrs {
		if a.Rule == nil || a.Rule.Then.Attr != a.Name {
			t.Errorf("attribute %s got rule %v", a.Name, a.Rule)
		}
	}
	if len(s.Constraints) != 1 {
		t.Errorf("%d constraints, want 1", len(s.Constraints))
	}
}

func TestParseTextFoldsCommentsAndSpace(t *testing.T) {
	src := "node X;\t/* the next */  node Y;\n\n  X[2] != NULL   // guard\n => (X[2])==Y ;"
	s, err := Parse("t.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := "node X; node Y; X[2] != NULL => (X[2])==Y ;"
	if got := s.Constraints[0].Text; got != want {
		t.Errorf("Text %q, want %q", got, want)
	}
}

// The examples of the shared dialect and of Singh's dissertation (chapter 2),
// as written there; the paper's prose lines (`– struct ...`) and the
// constraint labels (`..(c1)`) are comments here.
var examples = map[string]string{
	"contract": `// quad tree (the fault-location paper, Figure 2)
qdtree FIELD 9 EDGE 5;
qdtree X; X.ISROOT == false => X.INDEGREE == 1;
qdtree X; qdtree Y; X ~> Y => Y !~> X;
qdtree X; qdtree Y; X -> Y => X.OUTDEGREE == 4;

// singly linked list: next (slot 2) is NULL or points to a list node
node FIELD 2 EDGE 1;
node X; node Y; X[2] != NULL => (X[2]) == Y;

// doubly linked list: if X points to Y, Y points back to X
dnode FIELD 3 EDGE 2;
dnode X; dnode Y; X -> Y => Y -> X;

// B-tree (2-3 tree)
btree FIELD 6 EDGE 3;
btree X; X.ISROOT == false => X.INDEGREE == 1;
btree X; btree Y; X ~> Y => Y !~> X;
btree X; btree Y; X -> Y => 2 <= X.OUTDEGREE;
btree X; btree Y; X -> Y => X.OUTDEGREE <= 3;
btree X; X.ISLEAF == false => X.OUTDEGREE == X[1] + 1;

// AVL balance
avltree FIELD 3 EDGE 2;
avltree.HEIGHT;
avltree X; X.ISLEAF == true => X.HEIGHT = 0 || X.HEIGHT = ((X[2]).HEIGHT >= (X[3]).HEIGHT) ? (X[2]).HEIGHT + 1 : (X[3]).HEIGHT + 1;
avltree X; (X[2]).HEIGHT - (X[3]).HEIGHT <= 1 and (X[2]).HEIGHT - (X[3]).HEIGHT >= -1;
`,
	"contract-table": `qdtree FIELD 9 EDGE 5;
ARRAY shard;
ARRAY shard2 OF 8;
qdtree ALLOC qdtree.c:19, qdtree.c:35;
qdtree ALLOC split, insert;
CPOINT insert ENTRY; CPOINT insert EXIT; CPOINT qdtree.c:28;
avltree.HEIGHT;
avltree X; X.ISLEAF == true => X.HEIGHT = 0 || X.HEIGHT = ((X[2]).HEIGHT >= (X[3]).HEIGHT) ? (X[2]).HEIGHT + 1 : (X[3]).HEIGHT + 1;
qdtree X; qdtree Y; X -> Y => X.OUTDEGREE == 4;
shard X; for I in 0 to 7, X[I*4 + 1] < X[(I+1)*4 + 1];
`,
	"seed-1": `// – struct btree{ int count; int key[2]; struct btree * child[3];}
    btree FIELD 6 EDGE 3;

// – struct avltree{ int val; struct avltree * right, * left;}
    avltree FIELD 3 EDGE 2;
`,
	"seed-2-avl": `avltree.HEIGHT; avltree X;

X.ISLEAF == true ⇒ X.HEIGHT = 0 ||
X.HEIGHT = (X[2].HEIGHT ≥ X[3].HEIGHT) ?
X[2].HEIGHT+1 : X[3].HEIGHT+1;
`,
	"seed-2-rb": `// - struct rbtree{ int color; struct avltree * right, * left;}
rbtree.BHEIGHT; rbtree X;

X.ISLEAF == true ⇒ X.BHEIGHT = 0 ||
X.BHEIGHT = (X[2].(1) != BLACK) ?
X[2].BHEIGHT : X[2].BHEIGHT+1;
`,
	"seed-3": `avltree X;

(X[2]).HEIGHT - (X[3]).HEIGHT ≤ 1 and
(X[2]).HEIGHT - (X[3]).HEIGHT ≥ -1;
`,
	"seed-4": `ARRAY shard;
    shard X;
    for I in 0 to 8, X[I*4 +1] < X[(I+1)*4 +1];
`,
	"seed-5": `// – struct node{ int value; struct node * next;}

node FIELD 2 EDGE 1;
    node X; node Y;
    X[2] ≠ NULL ⇒ (X[2]) == Y;
`,
	"seed-fig-4.2": `qdtree FIELD 9 EDGE 5;   /*# total fields and # pointer fields */
qdtree X;
X.ISROOT == FALSE ⇒ X.INDEGREE == 1;                 // ..(c1)
qdtree X; qdtree Y;
X → Y ⇒ Y ↛ X;                                       // ..(c2)
qdtree X; qdtree Y;
X → Y ⇒ X.OUTDEGREE == 4;                            // ..(c3)
`,
	"seed-fig-4.2-paths": `qdtree FIELD 9 EDGE 5;
qdtree X; qdtree Y;
X ↠ Y ⇒ Y ↛↠ X;
`,
	"seed-6": `qdtree X; qdtree Y;
X → Y ⇒ X.OUTDEGREE == 4;
`,
}

func TestParseExamples(t *testing.T) {
	for name, src := range examples {
		s, err := Parse(name, []byte(src))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		s2, err := Parse(name, []byte(s.String()))
		if err != nil {
			t.Errorf("%s: reparse of\n%s: %v", name, s, err)
			continue
		}
		if s2.String() != s.String() {
			t.Errorf("%s: round trip\n%s\nwant\n%s", name, s2, s)
		}
	}
	s, _ := Parse("seed-4", []byte(examples["seed-4"]))
	if r := s.Constraints[0].Range; r.From != 0 || r.To != 8 {
		t.Errorf("shard range %d to %d", r.From, r.To)
	}
	s, _ = Parse("seed-2-rb", []byte(examples["seed-2-rb"]))
	rule := s.Attrs[0].Rule
	if got := shape(rule.Else.Value); got != "Cond(Binary(!=, Field(Deref(X, Int(2)), Int(1)), BLACK), Attr(Deref(X, Int(2)), BHEIGHT), Binary(+, Attr(Deref(X, Int(2)), BHEIGHT), Int(1)))" {
		t.Errorf("BHEIGHT rule: %s", got)
	}
}

// fakeLayout is the debug info of a program with the paper's structures.
func fakeLayout(name string) (*Layout, bool) {
	mk := func(n int, ptr ...int) *Layout {
		l := &Layout{Name: name}
		isPtr := make(map[int]bool)
		for _, p := range ptr {
			isPtr[p] = true
		}
		var off uint64
		for i := 1; i <= n; i++ {
			size := uint64(4)
			if isPtr[i] {
				size = 8
				off = (off + 7) &^ 7
			}
			l.Slots = append(l.Slots, Slot{Name: fmt.Sprintf("f%d", i), Offset: off, Size: size, Pointer: isPtr[i]})
			off += size
		}
		l.Size = (off + 7) &^ 7
		return l
	}
	switch name {
	case "qdtree":
		return mk(9, 5, 6, 7, 8, 9), true
	case "btree":
		return mk(6, 4, 5, 6), true
	case "avltree", "rbtree", "dnode":
		return mk(3, 2, 3), true
	case "node":
		return mk(2, 2), true
	}
	return nil, false
}

func TestCheckExamples(t *testing.T) {
	all := examples["contract"] + `
rbtree FIELD 3 EDGE 2;
CONST BLACK = 1;
rbtree.BHEIGHT; rbtree X;
X.ISLEAF == true ⇒ X.BHEIGHT = 0 ||
X.BHEIGHT = (X[2].(1) != BLACK) ?
X[2].BHEIGHT : X[2].BHEIGHT+1;
ARRAY shard; shard ALLOC graphchi.c:88;
shard X;
for I in 0 to 8, X[I*4 +1] < X[(I+1)*4 +1];
qdtree X; qdtree Y;
X ↠ Y ⇒ Y ↛↠ X;
`
	s, err := Parse("all.spec", []byte(all))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(s, nil); err != nil {
		t.Errorf("Check without layouts: %v", err)
	}
	if err := Check(s, fakeLayout); err != nil {
		t.Errorf("Check with layouts: %v", err)
	}
}

func TestErrorList(t *testing.T) {
	src := "x FIELD 1 EDGE 0 0;\nx X; X[1] < < 2;\nx X; X[1] < 2 < 3;\nARRAY a OF 3;\nCPOINT f;\nx X;"
	_, err := Parse("e.spec", []byte(src))
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %T, want ErrorList", err)
	}
	want := `e.spec:1:18: unexpected "0", expected ";"
e.spec:2:13: unexpected "<", expected an expression
e.spec:3:15: unexpected "<": relations and connections do not chain (use and, or parentheses)
e.spec:4:12: slot size 3: want 1, 2, 4 or 8
e.spec:5:9: unexpected ";", expected ENTRY or EXIT after CPOINT f
e.spec:6:1: variable declarations at the end of the file are not followed by a constraint or rule`
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	if list[0].File != "e.spec" || list[0].Pos != (Pos{1, 18}) || list[0].Msg != `unexpected "0", expected ";"` {
		t.Errorf("first error %+v", list[0])
	}
}

func TestParseTooManyErrors(t *testing.T) {
	src := strings.Repeat("x X; 1 + ;\n", 80)
	_, err := Parse("m.spec", []byte(src))
	list, ok := err.(ErrorList)
	if !ok {
		t.Fatalf("error %T", err)
	}
	if len(list) != maxErrors+1 || list[len(list)-1].Msg != msgTooMany {
		t.Errorf("%d errors, last %v", len(list), list[len(list)-1])
	}
	for i := 1; i < maxErrors; i++ {
		if list[i].Pos.Line != i+1 {
			t.Fatalf("error %d on line %d", i, list[i].Pos.Line)
		}
	}
}

func TestParseDeepNesting(t *testing.T) {
	for _, src := range []string{
		"x X; " + strings.Repeat("(", 100000) + "1;",
		"x X; " + strings.Repeat("-", 100000) + "X[1];",
		"x X; " + strings.Repeat("X[", 100000) + "1;",
		"x X; " + strings.Repeat("|", 100000) + "1;",
		"x X; " + strings.Repeat("1 + ", 100000) + "1;",
		"x X; " + strings.Repeat("X.ISLEAF and ", 100000) + "true;",
		"x X; X" + strings.Repeat("[1]", 100000) + ";",
	} {
		_, err := Parse("d.spec", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("deep nesting: %v", err)
		}
	}
	// Nesting below the limit is fine.
	src := "x FIELD 1 EDGE 0; x X; " + strings.Repeat("(", 300) + "X[1] + 0" + strings.Repeat(")", 300) + " == 1;"
	s, err := Parse("d.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(s, nil); err != nil {
		t.Fatal(err)
	}
}

func TestParsePartialSpec(t *testing.T) {
	s, err := Parse("p.spec", []byte("a FIELD 2 EDGE 1;\nb FIELD x;\nc FIELD 3 EDGE 1;\n"))
	if err == nil {
		t.Fatal("no error")
	}
	if len(s.Types) != 2 || s.Types[1].Name != "c" {
		t.Errorf("types %v", s.Types)
	}
}

// Check must not panic on hand-built syntax trees with missing parts.
func TestCheckIncompleteTree(t *testing.T) {
	s := &Spec{
		File:     "h.spec",
		Types:    []*TypeDecl{nil, {Name: "t", Fields: 2, Edges: 1}, {Name: "a", Array: true, SlotSize: 3}},
		Consts:   []*ConstDecl{nil},
		Bindings: []*Binding{nil, {Type: "t"}, {Type: "a", Sites: []Site{{}}}},
		CPoints:  []*CPoint{nil, {}},
		Attrs: []*AttrDecl{nil, {Type: "t", Name: "H", Rule: &Rule{}},
			{Type: "t", Name: "G", Rule: &Rule{Vars: []VarDecl{{Type: "t", Name: "X"}}, Guard: &Bool{Value: true},
				Then: &Assign{Var: "X", Attr: "G"}}}},
		Constraints: []*Constraint{nil, {}, {Vars: []VarDecl{{Type: "t", Name: "X"}}, Range: &Range{Var: "I"},
			Body: &Binary{Op: OpLt, L: &Field{Node: &Ident{Name: "X"}}, R: &Deref{}}},
			{Vars: []VarDecl{{Type: "t", Name: "X"}}, Body: &Binary{Op: OpNeg, L: &Attr{Name: "ISROOT"}, R: &Unary{Op: OpAdd}}},
			{Vars: []VarDecl{{Type: "t", Name: "X"}}, Body: &Cond{}}},
	}
	err := Check(s, func(string) (*Layout, bool) { return nil, true })
	if err == nil {
		t.Fatal("no error")
	}
	if err := Check(nil, nil); err == nil {
		t.Fatal("Check(nil) succeeded")
	}
}

// TestReturnsAndFree parses the bindings of a program's own allocator:
// `T ALLOC f RETURNS [n];` and `T FREE f;`, next to the forms they extend.
func TestReturnsAndFree(t *testing.T) {
	src := `lnode FIELD 2 EDGE 1;
ARRAY slab;
lnode ALLOC pool_get RETURNS, lnode.c:12, grow;
slab ALLOC slab_get RETURNS 64;
lnode FREE pool_put, pool_drop;
lnode FREE;          // a variable named FREE
FREE.ISROOT;
`
	s, err := Parse("p.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sites := s.Bindings[0].Sites
	if len(sites) != 3 || !sites[0].Returns || sites[0].Func != "pool_get" || sites[0].Size != 0 || sites[1].Returns || sites[1].Line != 12 || sites[2].Returns || sites[2].Func != "grow" {
		t.Errorf("lnode sites: %+v", sites)
	}
	if st := s.Bindings[1].Sites[0]; !st.Returns || st.Size != 64 || st.String() != "slab_get RETURNS 64" {
		t.Errorf("slab site: %+v", st)
	}
	if len(s.Frees) != 1 || s.Frees[0].Type != "lnode" || len(s.Frees[0].Funcs) != 2 || s.Frees[0].Funcs[1].Func != "pool_drop" || s.Frees[0].Pos != (Pos{5, 1}) || s.Frees[0].Funcs[0].Pos != (Pos{5, 12}) {
		t.Errorf("FREE: %+v", s.Frees)
	}
	if len(s.Constraints) != 1 || s.Constraints[0].Vars[0].Name != "FREE" {
		t.Errorf("`lnode FREE; FREE.ISROOT;` is a constraint with a variable FREE: %+v", s.Constraints)
	}
	want := "lnode ALLOC pool_get RETURNS, lnode.c:12, grow;\nslab ALLOC slab_get RETURNS 64;\nlnode FREE pool_put, pool_drop;\n"
	if !strings.Contains(s.String(), want) {
		t.Errorf("String:\n%s\nwant it to hold:\n%s", s, want)
	}
	s2, err := Parse("s2.spec", []byte(s.String()))
	if err != nil {
		t.Fatal(err)
	}
	if s2.String() != s.String() {
		t.Errorf("round trip:\n%s\nwant:\n%s", s2, s)
	}
	if err := Check(s, nil); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestLink parses `T LINK n, m;`, the embedded links of intrusive
// structures, and the variable named LINK it leaves possible.
func TestLink(t *testing.T) {
	src := `CONST RB = 4;
task FIELD 5 EDGE 2;
task LINK 2, RB;
task LINK;           // a variable named LINK
LINK.ISROOT;
`
	s, err := Parse("l.spec", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Links) != 1 || s.Links[0].Type != "task" || len(s.Links[0].Slots) != 2 || s.Links[0].Slots[0].Slot != 2 || s.Links[0].Slots[1].Slot != 4 || s.Links[0].Slots[1].Pos != (Pos{3, 14}) {
		t.Errorf("LINK: %+v", s.Links)
	}
	if len(s.Constraints) != 1 || s.Constraints[0].Vars[0].Name != "LINK" {
		t.Errorf("`task LINK; LINK.ISROOT;` is a constraint with a variable LINK: %+v", s.Constraints)
	}
	if !strings.Contains(s.String(), "task LINK 2, 4;\n") {
		t.Errorf("String:\n%s", s)
	}
	s2, err := Parse("s2.spec", []byte(s.String()))
	if err != nil {
		t.Fatal(err)
	}
	if s2.String() != s.String() {
		t.Errorf("round trip:\n%s\nwant:\n%s", s2, s)
	}
	if err := Check(s, nil); err != nil {
		t.Errorf("Check: %v", err)
	}
	for _, bad := range []struct{ src, want string }{
		{"task LINK 0;", "b.spec:1:11: LINK slot 0: slots are numbered from 1"},
		{"task LINK x;", `b.spec:1:11: unexpected "x", expected an integer (x is not a constant declared before)`},
		{"task LINK 2 3;", `b.spec:1:13: unexpected "3", expected ";"`},
	} {
		_, err := Parse("b.spec", []byte(bad.src))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Parse(%q) = %v, want %q", bad.src, err, bad.want)
		}
	}
}
